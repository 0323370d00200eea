import Foundation

/// Who is running, for lock records: user@host, the pid and when that process started (so a pid reused
/// by another process after a crash is not mistaken for the holder).
package struct ProcessIdentity: Sendable, Hashable {
    package var user: String
    package var host: String
    package var pid: Int32
    package var processStart: UInt64?

    package init(user: String, host: String, pid: Int32, processStart: UInt64?) {
        self.user = user
        self.host = host
        self.pid = pid
        self.processStart = processStart
    }

    package static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> ProcessIdentity {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        let host = String(cString: name)
        var user = environment["USER"] ?? ""
        if user.isEmpty, let entry = getpwuid(geteuid()), let pointer = entry.pointee.pw_name { user = String(cString: pointer) }
        let pid = getpid()
        return ProcessIdentity(user: user.isEmpty ? "uid\(geteuid())" : user, host: host, pid: pid, processStart: startTime(of: pid))
    }

    /// Field 22 of /proc/PID/stat, counted after the command name (which may itself hold spaces).
    package static func startTime(of pid: Int32) -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }

    /// Whether `pid` on this host is still the process that took the lock.
    package static func isAlive(pid: Int32, processStart: UInt64?) -> Bool {
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        // A killed process that its parent has not reaped yet is a zombie: it holds nothing.
        if let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")"),
            text[text.index(after: close)...].split(separator: " ").first == "Z"
        {
            return false
        }
        if let processStart, let now = startTime(of: pid) { return now == processStart }
        return true
    }
}
