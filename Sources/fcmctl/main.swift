import FCMCommands
import Foundation

StartupCheck.requireDescriptors()
Interruption.install()
exit(await FCMCtl.execute(Array(CommandLine.arguments.dropFirst())))
