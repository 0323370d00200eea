import FCMCommands
import Foundation

StartupCheck.requireDescriptors()
StartupCheck.limitMallocArenas()
Interruption.install()
exit(await FCMCtl.execute(Array(CommandLine.arguments.dropFirst())))
