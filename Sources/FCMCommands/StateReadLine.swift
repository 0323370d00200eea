import FCMCore

/// What a read-only run read: the state, its serial and (in a bucket) its generation, and that no lock was
/// taken, so a log says exactly which state a plan or a drift report was made from.
enum StateReadLine {
    static func text(store: any StateStore, version: StateVersion?) -> String {
        guard let version else { return "State: \(store.displayName) (none yet), read without a lock." }
        let generation = version.generation.map { ", generation \($0)" } ?? ""
        return "State: \(store.displayName) serial \(version.serial)\(generation), read without a lock."
    }
}
