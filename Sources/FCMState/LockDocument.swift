import FCMCore
import Foundation

/// The lock as every store writes it (JSON, ISO 8601 times), and when a lock whose holder is gone may be
/// taken over: one rule for the local file and the bucket object.
enum LockDocument {
    /// The layout JSONEncoder's `[.sortedKeys, .prettyPrinted]` with ISO 8601 dates gives, written by hand:
    /// the encoder's first use in a process cost ~0.4 ms, a tenth of a small apply's state handling.
    static func encode(_ lock: LockInfo) -> [UInt8] {
        var out = JSONWriter(capacity: 320)
        func field(_ name: StaticString, first: Bool = false) {
            out.raw(first ? "{\n  \"" : ",\n  \"")
            out.raw(name)
            out.raw("\" : ")
        }
        field("created", first: true)
        out.string(lock.created.ISO8601Format())
        field("expires")
        out.string(lock.expires.ISO8601Format())
        field("host")
        out.string(lock.host)
        field("id")
        out.string(lock.id)
        field("operation")
        out.string(lock.operation)
        field("pid")
        out.int(Int(lock.pid))
        if let start = lock.processStart {
            field("processStart")
            out.bytes.append(contentsOf: String(start).utf8)
        }
        field("version")
        out.string(lock.version)
        field("who")
        out.string(lock.who)
        out.raw("\n}\n")
        return out.bytes
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
