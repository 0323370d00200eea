import FCMCommands
import Foundation

Interruption.install()
exit(await FCMCtl.execute(Array(CommandLine.arguments.dropFirst())))
