import FCMCommands
import Foundation

exit(await FCMCtl.execute(Array(CommandLine.arguments.dropFirst())))
