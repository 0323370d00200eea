import Foundation

/// Who holds an flock(2), as the system tells it, so a refusal names the process instead of sending a person
/// to `fuser`. Linux lists every lock in /proc/locks (`1: FLOCK  ADVISORY  WRITE 4242 fe:00:16220456 0 EOF`:
/// the pid, then the device and inode locked); elsewhere, or when the holder is in another pid namespace, it
/// is nil and the message says how to find it.
enum FlockHolder {
    static func describe(fd: Int32) -> String? {
        #if os(Linux)
            var info = stat()
            guard fstat(fd, &info) == 0, let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
            let device = UInt64(info.st_dev)
            let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
            let minor = (device & 0xff) | ((device >> 12) & ~0xff)
            for line in table.split(separator: "\n") {
                let fields = line.split(separator: " ")
                // A waiter's line reads "1: -> FLOCK …": only holders name the process that has the lock.
                guard fields.count >= 6, fields[1] == "FLOCK", let pid = Int32(fields[4]), pid > 0 else { continue }
                let place = fields[5].split(separator: ":")
                guard place.count == 3, UInt64(place[0], radix: 16) == major, UInt64(place[1], radix: 16) == minor,
                    UInt64(place[2]) == UInt64(info.st_ino)
                else { continue }
                let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                return name.map { "pid \(pid), \(Self.printable($0))" } ?? "pid \(pid)"
            }
            return nil
        #else
            return nil
        #endif
    }

    /// A process may name itself anything: only printable ASCII of it reaches a message.
    static func printable(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.prefix(32)))
    }
}
