import FCMCore
import Foundation

/// The state layer's errors and lock holders, as people read them.
extension LockInfo {
    package func describe(now: Date) -> String {
        let age = max(0, Int(now.timeIntervalSince(created).rounded()))
        return "\(who) (pid \(pid)), operation \(operation), for \(Self.duration(age)) (lock id \(id))"
    }

    package static func duration(_ seconds: Int) -> String {
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 7200 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h"
    }
}

extension StateLockedError: CustomStringConvertible {
    package var description: String {
        "the state \(store) is locked by \(holder.describe(now: now)). Wait for it to finish or pass --lock-timeout; "
            + "if that run is gone for good, remove the lock with: fcmctl state unlock \(holder.id)"
    }
}

extension ObjectStorageError: CustomStringConvertible {
    package var description: String {
        switch self {
        case .preconditionFailed(let name): "\(name) changed since it was read (generation mismatch)"
        case .notFound(let name): "\(name) does not exist"
        case .failed(let message): message
        }
    }
}
