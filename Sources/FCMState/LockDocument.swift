import FCMCore
import Foundation

/// The lock as every store writes it (JSON, ISO 8601 times), and when a lock whose holder is gone may be
/// taken over: one rule for the local file and the bucket object.
enum LockDocument {
    static func encode(_ lock: LockInfo) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return Array((try? encoder.encode(lock)) ?? Data()) + [UInt8(ascii: "\n")]
    }

    /// `source` names the lock in the error, with what to do.
    static func decode(_ bytes: [UInt8], source: String, remedy: String) throws -> LockInfo {
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(LockInfo.self, from: Data(bytes))
        } catch {
            throw StateError("\(source): the state lock is not readable (\(error)); \(remedy)")
        }
    }

    /// Why `lock` may be taken over, or nil while its holder may still be at work. Another machine's
    /// liveness cannot be checked: there only an expired lease counts.
    static func staleReason(_ lock: LockInfo, identity: ProcessIdentity, now: Date) -> String? {
        if lock.host == identity.host, !ProcessIdentity.isAlive(pid: lock.pid, processStart: lock.processStart) {
            return "that process is gone"
        }
        if lock.expires < now {
            return "its lease expired \(LockInfo.duration(Int(now.timeIntervalSince(lock.expires)))) ago"
        }
        return nil
    }
}
