import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

struct StateRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Forget objects: fcmctl stops managing them. Nothing in FCM is changed.",
        discussion: "A forgotten subscription is no longer fcmctl's to remove; a forgotten group is adopted again only if declared.")

    @OptionGroup var location: StateLocation
    @OptionGroup var locking: LockOptions

    @Argument(help: "\(Address.forms) (the full registration).")
    var addresses: [String]

    func run() async throws {
        let parsed = try addresses.map(Address.init(parsing:))
        let session = try location.session(writing: true)
        let removal = try await surfacing {
            try await session.removeFromState(parsed, lock: locking.lock, lockTimeout: locking.lockTimeout.duration)
        }
        Console.current.out(
            "Removed \(plural(removal.removed, "record")) from \(removal.stateName) (serial \(removal.serial)). FCM was not changed.")
    }
}
