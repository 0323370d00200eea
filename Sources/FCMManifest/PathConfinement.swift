import FCMCore
import Foundation

/// Manifests, includes and device files are read only inside the repository: the directory holding `.git`
/// above the first `-f`, or that path's own directory when there is none. A pull request controls every file
/// in it, and a plan job prints what it reads (an error quotes the offending line), so `include: [../..]`,
/// `deviceFiles: [/etc/…]` or a committed symlink to the credentials file the runner's sign-in step wrote
/// would otherwise print files the pull request has no business seeing. `--allow-outside-paths` lifts it.
package struct PathConfinement: Sendable {
    package enum Policy: Sendable {
        case repository
        case anywhere
    }

    /// The root as written (absolute, `..` resolved as text) and as the file system resolves it.
    let root: String?
    let realRoot: String?
    /// How the root was found, for the message: `the directory holding .git` or `the first -f's directory`.
    let rootKind: String

    package init(_ policy: Policy, firstPath: String?) {
        guard policy == .repository, let firstPath else {
            (root, realRoot, rootKind) = (nil, nil, "")
            return
        }
        let absolute = Self.lexical(firstPath)
        var isDirectory: ObjCBool = false
        let start =
            FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) && isDirectory.boolValue
            ? absolute : PathText.directory(of: absolute)
        var candidate = start
        var found: String?
        while true {
            if FileManager.default.fileExists(atPath: candidate == "/" ? "/.git" : candidate + "/.git") {
                found = candidate
                break
            }
            if candidate == "/" || candidate.isEmpty { break }
            candidate = PathText.directory(of: candidate)
        }
        root = found ?? start
        realRoot = Self.real(found ?? start) ?? found ?? start
        rootKind = found == nil ? "the first -f's directory; no .git above it" : "the directory holding .git"
    }

    /// Why `path` may not be read, or nil when it may. Decided on the text first, so a path leaving the
    /// repository is refused without looking at it; then through symbolic links.
    /// `written`: the path as the manifest spells it, for the message.
    package func refusal(_ path: String, written: String? = nil) -> String? {
        guard let root, let realRoot else { return nil }
        let name = written ?? path
        let shown = "\(root), \(rootKind)"
        guard Self.isInside(Self.lexical(path), root) else {
            return "\(name) is outside the repository (\(shown)); fcmctl reads manifests and device files only inside it, "
                + "so a pull request cannot make a plan print other files. Move the file into the repository, or pass "
                + "--allow-outside-paths for a local run"
        }
        if let real = Self.real(path), !Self.isInside(real, realRoot) {
            return "\(name) is a symbolic link that leads outside the repository (\(shown)); fcmctl does not follow it, "
                + "so a pull request cannot make a plan print other files. Copy the file into the repository, or pass "
                + "--allow-outside-paths for a local run"
        }
        return nil
    }

    static func isInside(_ path: String, _ root: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }

    /// Absolute against the working directory, with `.` and `..` taken as text (`a/../b` → `b`).
    static func lexical(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [Substring] = []
        for part in full.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The path with every symbolic link resolved, or nil when it does not exist.
    static func real(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
