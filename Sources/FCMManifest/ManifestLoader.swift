import FCMCore
import Foundation
import Synchronization

/// The result of loading manifests: the merged manifest (nil when any error was found), every
/// diagnostic, and the bytes of each manifest file read so diagnostics can quote the offending line.
package struct ManifestLoadResult: Sendable {
    /// nil when any error was found.
    package var manifest: Manifest?
    package var resolution: Resolution?
    package var diagnostics: [Diagnostic]
    /// The YAML manifests' bytes, by path.
    package var sources: [String: [UInt8]]
    /// Each device file's SHA-256 (hex), by path: device files are streamed, not kept.
    package var deviceFileDigests: [String: String] = [:]
    /// The manifest files the paths named themselves: not those read through `include` or `deviceFiles`.
    package var ownFiles: [String] = []
    /// The manifest files read through `include` (as their paths resolve, e.g. `dev/../base/a.yaml`).
    package var includedFiles: [String] = []

    /// The desired state, when the manifest loaded without errors.
    package var desiredState: DesiredState? {
        guard let manifest, let resolution else { return nil }
        return manifest.desiredState(resolution)
    }
}

/// Reads manifest files and directories (every `*.yaml`/`*.yml` directly inside, merged), validates
/// the whole, and reports all problems at once.
package struct ManifestLoader: Sendable {
    package var reader: YAMLReader
    package var outsidePaths: PathConfinement.Policy

    package init(reader: YAMLReader = YAMLReader(streamsDevices: true), outsidePaths: PathConfinement.Policy) {
        self.reader = reader
        self.outsidePaths = outsidePaths
    }

    /// A fleet of 100,000 devices is 26 MB in all; one file ten times that is a mistake, not a manifest.
    package static let maximumFileBytes: Int64 = 256 * 1_048_576

    package func load(paths: [String]) -> ManifestLoadResult {
        var diagnostics: [Diagnostic] = []
        var sources: [String: [UInt8]] = [:]
        var deviceFileDigests: [String: String] = [:]
        var parts: [Manifest] = []
        let confinement = PathConfinement(outsidePaths, firstPath: paths.first)
        // A worklist: `include` adds manifests as they are read; each file is read once, whoever names it.
        var queue = expand(paths, confinement, diagnostics: &diagnostics)
        let ownFiles = queue
        var includedFiles: [String] = []
        var seen = Set(queue.map(Self.identity))
        var next = 0
        while next < queue.count {
            // The files known so far are parsed side by side; what they lead to (includes, device files) is taken
            // in the order one file after another would, so diagnostics and merging are the same.
            let batch = Array(queue[next...])
            next = queue.count
            for (file, parsed) in zip(batch, parse(batch)) {
                diagnostics.append(contentsOf: parsed.diagnostics)
                if let bytes = parsed.bytes { sources[file] = bytes }
                guard var part = parsed.part else { continue }
                let files = part.deviceFiles
                part.deviceFiles = []
                for entry in part.includes {
                    let target = Self.relative(entry.value, to: file)
                    if let refused = confinement.refusal(target, written: entry.value) {
                        diagnostics.append(.error("include: \(refused)", at: entry.location))
                        continue
                    }
                    guard FileManager.default.fileExists(atPath: target) else {
                        diagnostics.append(.error("include: \(target) does not exist; the path is relative to this manifest", at: entry.location))
                        continue
                    }
                    var isDirectory: ObjCBool = false
                    if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory), !isDirectory.boolValue, !Self.isYAML(target) {
                        diagnostics.append(
                            .error(
                                "include: \(entry.value) is not a *.yaml or *.yml file; include names manifests (a file or a directory of them), "
                                    + "devices in CSV or JSON Lines go under deviceFiles", at: entry.location))
                        continue
                    }
                    for included in expand([target], confinement, diagnostics: &diagnostics, includedAt: entry.location)
                    where seen.insert(Self.identity(included)).inserted {
                        queue.append(included)
                        includedFiles.append(included)
                    }
                }
                part.includes = []
                parts.append(part)
                for entry in files {
                    parts.append(deviceFile(entry, of: file, confinement, diagnostics: &diagnostics, digests: &deviceFileDigests))
                }
            }
        }
        var merged = merge(parts, diagnostics: &diagnostics)
        parts = []
        // In name order, so a device's place in the table is its position in `Resolution`.
        merged.devices = merged.devices.sortedByName()
        let resolution = ManifestResolver(merged).resolve()
        diagnostics.append(contentsOf: resolution.diagnostics)
        diagnostics.append(contentsOf: ManifestRules.check(RuleContext(manifest: merged, resolution: resolution)))
        let sorted = diagnostics.sortedForDisplay()
        let ok = !sorted.hasErrors
        var result = ManifestLoadResult(manifest: ok ? merged : nil, resolution: ok ? resolution : nil, diagnostics: sorted, sources: sources)
        result.deviceFileDigests = deviceFileDigests
        result.ownFiles = ownFiles
        result.includedFiles = includedFiles
        return result
    }

    /// What reading one manifest file gave: its diagnostics, its bytes (when read) and its part (when it decoded).
    struct ParsedFile: Sendable {
        var diagnostics: [Diagnostic] = []
        var bytes: [UInt8]?
        var part: Manifest?
    }

    /// Reads, parses and decodes the files on as many threads as there are cores: a fleet's manifests are
    /// many files of devices, each one's work its own (registrations are interned under a lock).
    func parse(_ files: [String]) -> [ParsedFile] {
        if files.count == 1 { return [parse(files[0])] }
        let results = Mutex([ParsedFile?](repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let parsed = parse(files[index])
            results.withLock { $0[index] = parsed }
        }
        return results.withLock { $0.map { $0! } }
    }

    func parse(_ file: String) -> ParsedFile {
        var parsed = ParsedFile()
        if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber, size.int64Value > Self.maximumFileBytes {
            parsed.diagnostics.append(
                .error(
                    "the file is \(size.int64Value / 1_048_576) MiB, more than the \(Self.maximumFileBytes / 1_048_576) MiB a manifest file may be; "
                        + "split it into several files in one directory", at: SourceLocation(file: file, line: 1, column: 1)))
            return parsed
        }
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(file)
        } catch {
            parsed.diagnostics.append(
                .error(
                    "cannot read the file: \(Self.reason(error)); check the path and its permissions",
                    at: SourceLocation(file: file, line: 1, column: 1)))
            return parsed
        }
        parsed.bytes = bytes
        let document = reader.readDocument(bytes, file: file)
        let (root, found) = (document.root, document.diagnostics)
        parsed.diagnostics.append(contentsOf: found)
        if found.hasErrors { return parsed }
        guard let root, !root.isNull else {
            parsed.diagnostics.append(
                .error("the file is empty: a manifest needs at least 'apiVersion' and 'project'", at: SourceLocation(file: file, line: 1, column: 1)))
            return parsed
        }
        var decoder = ManifestDecoder(streamedDevices: document.devices)
        parsed.part = decoder.decode(root)
        parsed.diagnostics.append(contentsOf: decoder.diagnostics)
        return parsed
    }

    /// One device file as a manifest part of its own, so a name defined twice is reported at both places.
    func deviceFile(
        _ entry: Located<String>, of manifest: String, _ confinement: PathConfinement, diagnostics: inout [Diagnostic],
        digests: inout [String: String]
    ) -> Manifest {
        var part = Manifest()
        let path = Self.relative(entry.value, to: manifest)
        guard let format = DeviceFileReader.Format(path: path) else { return part }
        if let refused = confinement.refusal(path, written: entry.value) {
            diagnostics.append(.error("deviceFiles: \(refused)", at: entry.location))
            return part
        }
        var reader = DeviceFileReader()
        let byteCount: Int
        do {
            var lines = try DeviceFileLines(path: path)
            defer { lines.close() }
            try reader.read(&lines, file: path, format: format)
            // A problem that stops the reader (an unclosed quote) leaves bytes unread that the digest must cover.
            while try lines.next() != nil {}
            digests[path] = lines.digest
            byteCount = lines.count
        } catch {
            diagnostics.append(
                .error("cannot read the device file \(path): \(Self.reason(error)); check the path, relative to this manifest", at: entry.location))
            return part
        }
        part.files = [path]
        part.devices = reader.devices
        for (name, place, first) in reader.duplicates {
            for place in [place, first] { diagnostics.append(.error("device/\(name) is defined twice in \(entry.value); keep one", at: place)) }
        }
        // An export that came out empty is the commonest way to lose a fleet: its devices' subscriptions would all
        // be removed. A file that is meant to hold no devices is better left out of `deviceFiles`.
        if part.devices.isEmpty && reader.diagnostics.isEmpty {
            diagnostics.append(
                .error(
                    "the device file \(entry.value) holds no devices\(format == .csv && byteCount > 0 ? " (a header and no rows)" : ""): "
                        + "an export that came out empty would remove every subscription of its devices. Check the export; if the file is "
                        + "meant to be empty, take it out of deviceFiles",
                    at: entry.location))
        }
        diagnostics.append(contentsOf: reader.diagnostics)
        return part
    }

    /// Only YAML is quoted in errors: a device file's line may hold more than the field at fault.
    package static func isYAML(_ path: String) -> Bool {
        let ext = (path as NSString).pathExtension.lowercased()
        return ext == "yaml" || ext == "yml"
    }

    static func relative(_ path: String, to manifest: String) -> String {
        path.hasPrefix("/") ? path : (PathText.directory(of: manifest) as NSString).appendingPathComponent(path)
    }

    /// One file named two ways (`fcm/dev/../base/a.yaml`, `fcm/base/a.yaml`) is one file.
    package static func identity(_ path: String) -> String {
        (URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path)
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? FileBytes.CannotRead { return error.reason }
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSCocoaErrorDomain, nsError.code == NSFileReadNoSuchFileError { return "no such file" }
        return nsError.localizedDescription
    }

    /// `includedAt`: where an `include` names the paths, so an error about them points there.
    func expand(
        _ paths: [String], _ confinement: PathConfinement, diagnostics: inout [Diagnostic], includedAt: SourceLocation? = nil
    ) -> [String] {
        var files: [String] = []
        for path in paths {
            if let refused = confinement.refusal(path) {
                diagnostics.append(.error(includedAt == nil ? refused : "include: \(refused)", at: includedAt))
                continue
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                diagnostics.append(
                    .error("\(path): no such file or directory (or a symlink loop): pass a manifest file or a directory of *.yaml files"))
                continue
            }
            if !isDirectory.boolValue {
                files.append(path)
                continue
            }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            let yaml = entries.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.filter { !$0.hasPrefix(".") }.sorted()
            if yaml.isEmpty {
                let included = includedAt == nil ? "" : " (a base file deleted or renamed?); include a directory that holds the shared manifests"
                diagnostics.append(.error("\(path): the directory holds no *.yaml or *.yml files" + included, at: includedAt))
            }
            for entry in yaml.map({ (path as NSString).appendingPathComponent($0) }) {
                if let refused = confinement.refusal(entry) {
                    diagnostics.append(.error(includedAt == nil ? refused : "include: \(refused)", at: includedAt))
                } else {
                    files.append(entry)
                }
            }
        }
        return files
    }

    func merge(_ parts: [Manifest], diagnostics: inout [Diagnostic]) -> Manifest {
        var merged = Manifest()
        for part in parts {
            merged.files += part.files
            merged.project = mergeSection(merged.project, part.project, name: "project", location: \.location, diagnostics: &diagnostics)
            merged.state = mergeSection(merged.state, part.state, name: "state", location: \.location, diagnostics: &diagnostics)
            merged.defaults = mergeSection(merged.defaults, part.defaults, name: "defaults", location: \.location, diagnostics: &diagnostics)
            for (first, second) in merged.devices.merge(part.devices) {
                let earlier = merged.devices.location(at: first)
                let later = part.devices.location(at: second)
                let name = part.devices.name(at: second)
                diagnostics.append(.error("device/\(name) is defined twice (also at \(earlier.file):\(earlier.line))", at: later))
                diagnostics.append(.error("device/\(name) is defined twice (also at \(later.file):\(later.line))", at: earlier))
            }
            mergeNamed(into: &merged.groups, part.groups, kind: "group", location: \.location, diagnostics: &diagnostics)
            mergeNamed(into: &merged.topics, part.topics, kind: "topic", location: \.location, diagnostics: &diagnostics)
        }
        return merged
    }

    func mergeSection<Section>(
        _ existing: Section?, _ incoming: Section?, name: String, location: KeyPath<Section, SourceLocation>,
        diagnostics: inout [Diagnostic]
    ) -> Section? {
        guard let incoming else { return existing }
        guard let existing else { return incoming }
        for place in [incoming[keyPath: location], existing[keyPath: location]] {
            diagnostics.append(.error("'\(name)' is defined in two files; keep it in one", at: place))
        }
        return existing
    }

    /// The same name defined in two files is an error reported at both places.
    func mergeNamed<Item>(
        into merged: inout [String: Item], _ incoming: [String: Item], kind: String, location: KeyPath<Item, SourceLocation>,
        diagnostics: inout [Diagnostic]
    ) {
        if merged.isEmpty {
            merged = incoming
            return
        }
        merged.reserveCapacity(merged.count + incoming.count)
        for (name, item) in incoming {
            guard let earlier = merged[name] else {
                merged[name] = item
                continue
            }
            let first = earlier[keyPath: location]
            let second = item[keyPath: location]
            diagnostics.append(.error("\(kind)/\(name) is defined twice (also at \(first.file):\(first.line))", at: second))
            diagnostics.append(.error("\(kind)/\(name) is defined twice (also at \(second.file):\(second.line))", at: first))
        }
    }
}

extension Manifest {
    /// The names of the declared devices whose registration `keep` accepts.
    package func deviceNames(reserving capacity: Int = 0, where keep: (Registration) -> Bool) -> [Registration: String] {
        var names: [Registration: String] = [:]
        names.reserveCapacity(capacity)
        for position in 0..<devices.count {
            if let registration = devices.registration(at: position), keep(registration) { names[registration] = devices.name(at: position) }
        }
        return names
    }

    /// Builds the desired state from a manifest that loaded without errors and its resolution.
    /// `namingDevices` false: `deviceNames` is left empty and `namesDeferred` set (`deviceNames(where:)` fills it).
    package func desiredState(_ resolution: Resolution, namingDevices: Bool = true) -> DesiredState {
        let project = ProjectSettings(
            id: project?.id?.value ?? "", senderId: project?.senderId?.value ?? "", topicAPI: project?.topicApi?.value ?? .v1)
        var desired = DesiredState(project: project)
        if namingDevices {
            desired.deviceNames = deviceNames(reserving: devices.count) { _ in true }
        } else {
            desired.namesDeferred = true
        }
        let defaultProtect = defaults?.protect?.value ?? false
        let defaultOwnership = defaults?.ownership?.value ?? .additive
        let defaultMode = defaults?.groupMode?.value ?? .fcm
        for group in groups.values {
            let declared = DesiredGroup(
                name: group.name, members: Set((resolution.groupMembers[group.name] ?? []).map(\.registration)),
                protect: group.protect?.value ?? defaultProtect, location: group.location)
            if (group.mode?.value ?? defaultMode) == .local {
                desired.localGroups[group.name] = declared
            } else {
                desired.groups[group.name] = declared
            }
        }
        for topic in topics.values {
            let name = TopicNameRule.normalized(topic.name)
            desired.topics[name] = DesiredTopic(
                name: name, members: resolution.topicMembers[name].map(resolution.registrations(of:)) ?? [],
                ownership: topic.ownership?.value ?? defaultOwnership,
                protect: topic.protect?.value ?? defaultProtect, location: topic.location)
        }
        return desired
    }
}
