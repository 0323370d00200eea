import FCMCommands
import FCMEmulator
import Foundation

// The release archive ships one binary under two names (bin/fcm-emulator links to bin/fcmctl): each name
// alone carried its own Swift runtime, Foundation and ICU data, and the two made the archive half again as
// large as one. The name it was started by says which program it is.
let invokedAs = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
if invokedAs == "fcm-emulator" {
    await EmulatorCommand.runFromCommandLine()
} else {
    StartupCheck.requireDescriptors()
    StartupCheck.limitMallocArenas()
    exit(await FCMCtl.execute(Array(CommandLine.arguments.dropFirst())))
}
