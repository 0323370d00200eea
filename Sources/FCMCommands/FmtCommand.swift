import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews
import Foundation

struct FmtCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fmt",
        abstract: "Rewrite manifests in canonical form, keeping comments.",
        discussion: """
            Canonical form: block style with two-space indentation, keys in schema order, names, labels and \
            member lists sorted, scalars quoted only when needed. A file whose comments cannot be kept in place \
            (or that uses anchors, block scalars or several documents) is refused, never rewritten lossily.
            """)

    @OptionGroup var manifest: ManifestOptions

    @Argument(help: "Manifest files or directories; directories are searched recursively for manifests.")
    var paths: [String] = []

    @Flag(help: "Change nothing; list files that are not in canonical form and exit 1 if there are any.")
    var check = false

    func run() throws {
        let console = Console.current
        let sets = paths.isEmpty ? [manifest.paths] : ManifestSets.expandSkippingIncluded(paths, manifest.outsidePaths)
        if sets.isEmpty { throw fail("no manifests found under \(paths.joined(separator: ", "))") }
        var refused = 0
        var changed: [String] = []
        var done = Set<String>()
        for set in sets { try format(set, refused: &refused, changed: &changed, done: &done) }
        if refused > 0 { throw ExitCode(ExitCodes.error) }
        if check && !changed.isEmpty {
            console.err("\(changed.count) file\(changed.count == 1 ? " is" : "s are") not in canonical form; run fcmctl fmt")
            throw ExitCode(ExitCodes.error)
        }
    }

    /// `done`: files already formatted through another set (a base that two environments include).
    func format(_ paths: [String], refused: inout Int, changed: inout [String], done: inout Set<String>) throws {
        let console = Console.current
        // The whole set is validated first: a file may refer to devices declared in another.
        let result = ManifestLoader(outsidePaths: manifest.outsidePaths).load(paths: paths)
        DiagnosticPrinter(sources: result.sources).print(result.diagnostics.filter { $0.severity == .error })
        guard result.manifest != nil else {
            throw fail("fmt formats only valid manifests; fix the errors above first (\(paths.joined(separator: ", ")))")
        }
        // Included manifests are formatted with the set that includes them, once; device files never.
        for file in (result.ownFiles + result.includedFiles).sorted() where done.insert(ManifestLoader.identity(file)).inserted {
            guard let bytes = result.sources[file] else { continue }
            let text: String
            do {
                text = try ManifestFormatter.formatChecked(file: file, bytes: bytes)
            } catch {
                console.err("\(error)")
                refused += 1
                continue
            }
            if Array(text.utf8) == bytes { continue }
            changed.append(file)
            if check {
                console.out(file)
            } else {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
                    console.out("formatted \(file)")
                } catch {
                    console.say(.error("\(file): cannot write: \(error.localizedDescription)"))
                    refused += 1
                }
            }
        }
    }
}
