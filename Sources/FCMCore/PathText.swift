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
}
