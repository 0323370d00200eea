import Foundation

/// Gives equal strings one shared storage. Topic names arrive once per subscription in list responses
/// (ten per registration, a million at fleet scale); interned, each name is stored once however often it
/// is read.
package final class StringTable: @unchecked Sendable {
    private let lock = NSLock()
    private var strings = Set<String>()

    package init() {}

    package func intern(_ string: String) -> String {
        // Up to 15 UTF-8 bytes a String holds its text inline: nothing to share.
        if string.utf8.count <= 15 { return string }
        lock.lock()
        defer { lock.unlock() }
        if let existing = strings.firstIndex(of: string) { return strings[existing] }
        strings.insert(string)
        return string
    }
}
