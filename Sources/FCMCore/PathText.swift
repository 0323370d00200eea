/// Path arithmetic on text, for what `NSString.deletingLastPathComponent` does: swift-corelibs-foundation's
/// traps (SIGILL) on a one-character last component, so `--state b/state.json` once killed `plan` while
/// it created `b`.
package enum PathText {
    /// The path without its last component: `a/b/c` → `a/b`, `a/` → ``, `/a` → `/`, `a` → ``.
    package static func directory(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        while end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// `path` with empty and `.` components dropped, made absolute against `base` when relative: `./a//b/` and
    /// `a/b` are one place. `..` is kept, since through a symbolic link it is not the parent's text.
    package static func normalized(_ path: String, against base: String) -> String {
        let full = path.hasPrefix("/") ? path : base + "/" + path
        let parts = full.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }
}
