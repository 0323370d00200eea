import FCMCore
import Foundation
import Testing

@testable import FCMManifest

/// The devices read as they stream by (`DeviceEntryStream`) must load exactly as the tree reads them: the same
/// devices, labels and places, and for every file the stream leaves to the tree, the same diagnostics.
@Suite struct DeviceStreamTests {
    static let header = "apiVersion: fcmctl/v1\nproject: {id: p, senderId: \"42\"}\ntopics:\n  news: {members: {selector: {site: s1}}}\n"
    static let token = "c1:APA91bHunvmxsRK5jPbxG8nmtp8B3SKpVJmDZUYmL5JrE0jhxY5Bq4DCO6nH1DVpbNaKlWvKfDcbZxJ9t1AxQ2sPz"

    /// Files of the common shape: the stream reads them, and nothing falls back to the tree.
    static let streamedFiles: [(String, String)] = [
        ("plain", "devices:\n  b:\n    token: \(token)b\n    labels:\n      site: s1\n      model: m1\n  a:\n    fid: fAbcdefghijklmnopqrstu\n"),
        ("flow and quoted", "devices:\n  \"c d\": {token: '\(token)c', labels: {site: \"s1\"}}\n  'e': {labels: {}, fid: fQ}\n"),
        ("tagged scalars", "devices:\n  !!str x:\n    !!str token: !!str \(token)x\n    labels: {n: !!str 12, empty: ''}\n"),
        ("null-looking but quoted", "devices:\n  n:\n    token: \"null\"\n    labels: {site: \"~\"}\n"),
        ("devices first", "devices:\n  z: {token: \(token)z}\n"),
        ("empty", "devices: {}\n"),
    ]

    /// Files the stream gives to the tree: valid ones and every mistake it does not read itself.
    static let unusualFiles: [(String, String)] = [
        ("anchor and alias", "devices:\n  a: &d {token: \(token)a, labels: {site: s1}}\n  b: *d\n"),
        ("merge key", "base: &b {site: s1}\ndevices:\n  a:\n    token: \(token)a\n    labels: {<<: *b, model: m}\n"),
        ("merge key on a device", "devices:\n  a: {<<: {labels: {site: s1}}, token: \(token)a}\n"),
        ("a name twice", "devices:\n  a: {token: \(token)a}\n  b: {token: \(token)b}\n  a: {token: \(token)c}\n"),
        ("token twice", "devices:\n  a:\n    token: \(token)a\n    token: \(token)b\n"),
        ("unknown key", "devices:\n  a:\n    tokn: \(token)a\n"),
        ("null token", "devices:\n  a:\n    token:\n  b:\n    token: ~\n"),
        ("token and fid", "devices:\n  a: {token: \(token)a, fid: fX}\n"),
        ("neither", "devices:\n  a: {labels: {site: s1}}\n"),
        ("labels a list", "devices:\n  a: {token: \(token)a, labels: [s1]}\n"),
        ("label null", "devices:\n  a: {token: \(token)a, labels: {site: null}}\n"),
        ("label twice", "devices:\n  a: {token: \(token)a, labels: {site: s1, site: s2}}\n"),
        ("labels null", "devices:\n  a: {token: \(token)a, labels: }\n"),
        ("nine labels", "devices:\n  a: {token: \(token)a, labels: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}}\n"),
        ("empty name", "devices:\n  \"\": {token: \(token)a}\n"),
        ("devices null", "devices:\n"),
        ("devices a list", "devices:\n  - a\n"),
        ("device a scalar", "devices:\n  a: \(token)a\n"),
        ("device null", "devices:\n  a:\n  b: {token: \(token)b}\n"),
        ("anchored devices", "devices: &all\n  a: {token: \(token)a}\n"),
        ("tagged device", "devices:\n  a: !!map {token: \(token)a}\n"),
        ("anchored token", "devices:\n  a: {token: &t \(token)a}\n"),
        ("value over 64 KiB", "devices:\n  a: {token: \(String(repeating: "x", count: 70_000))}\n"),
        ("unclosed quote", "devices:\n  a: {token: \"\(token)a}\n  b: {token: x}\n"),
        ("merged devices at the top", "shared: &s {devices: {m: {token: \(token)m}}}\n<<: *s\n"),
    ]

    /// Files whose devices stream until a late device the stream does not read: the tree takes over there, from
    /// the devices read whole and the one half read.
    static let takenOver: [(String, String)] = {
        let before = "devices:\n  d1:\n    token: \(token)1\n    labels: {site: s1, model: \"null\"}\n  '<<':\n    fid: \"~\"\n"
        return [
            ("alias in the last device", "anchors: &s {site: s1}\n" + before + "  d3: {token: \(token)3, labels: *s}\n"),
            ("a label written twice", before + "  d3:\n    token: \(token)3\n    labels:\n      site: s1\n      model: m\n      site: s2\n"),
            ("a token written twice", before + "  d3:\n    labels: {site: s1}\n    token: \(token)3\n    token: \(token)4\n"),
            ("a null label", before + "  d3:\n    token: \(token)3\n    labels: {site: s1, model: }\n"),
            ("a null token", before + "  d3:\n    labels: {a: b}\n    fid:\n"),
            ("an unknown key", before + "  d3:\n    token: \(token)3\n    tokn: x\n"),
            ("nine labels", before + "  d3: {token: \(token)3, labels: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}}\n"),
            ("a list of labels", before + "  d3: {token: \(token)3, labels: [a]}\n"),
            ("a device of nothing", before + "  d3:\n  d4: {token: \(token)4}\n"),
            ("a name written twice", before + "  d3: {token: \(token)3}\n  d1: {token: \(token)4}\n"),
            ("a merge key in labels", before + "  d3: {token: \(token)3, labels: {<<: {site: s1}}}\n"),
            ("a tagged mapping", before + "  d3: !!map {token: \(token)3}\n"),
            ("devices twice", before + "devices:\n  b: {token: \(token)b}\n"),
            ("an unclosed flow", before + "  d3: {token: \(token)3, labels: {site: s1}\n"),
            ("a key that is a list", before + "  ? [a, b]\n  : {token: \(token)3}\n"),
        ]
    }()

    @Test(arguments: takenOver)
    func theTreeTakesOverWhereTheStreamStops(name: String, text: String) throws {
        let tree = try load(text, streams: false)
        #expect(try load(text, streams: true) == tree, "\(name)")
        // The second `devices` streams whole (and is a duplicate key); a syntax error stops everything.
        if name != "devices twice" && name != "an unclosed flow" {
            let document = YAMLReader(streamsDevices: true).readDocument(Array((Self.header + text).utf8), file: "fleet.yaml")
            #expect(document.devices?.whole == false && (document.devices?.decoded.count ?? 0) >= 2, "\(name): no takeover after two devices")
        }
    }

    func load(_ text: String, streams: Bool, budget: Int = YAMLReader.defaultNodeBudget) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("fleet.yaml").path
        try (Self.header + text).write(toFile: path, atomically: true, encoding: .utf8)
        let reader = YAMLReader(nodeBudget: budget, streamsDevices: streams)
        let result = ManifestLoader(reader: reader, outsidePaths: .repository).load(paths: [path])
        var lines = result.diagnostics.map { "\($0.location.map { "\($0.line):\($0.column)" } ?? "-") \($0.message)" }
        if let devices = result.manifest?.devices {
            for position in 0..<devices.count {
                let at = devices.location(at: position)
                let written = devices.registrationLocation(at: position)
                lines.append(
                    "\(devices.name(at: position)) \(devices.registration(at: position).map { "\($0.kind) \($0.value)" } ?? "none") "
                        + "\(devices.labels(at: position).sorted { $0.key < $1.key }) \(at.line):\(at.column) \(written.line):\(written.column)")
            }
        }
        return lines
    }

    func streamed(_ text: String, budget: Int = YAMLReader.defaultNodeBudget) -> Int? {
        let document = YAMLReader(nodeBudget: budget, streamsDevices: true).readDocument(Array((Self.header + text).utf8), file: "fleet.yaml")
        return document.devices.flatMap { $0.whole ? $0.decoded.count : nil }
    }

    @Test(arguments: streamedFiles)
    func commonShapeStreamsAndLoadsAsTheTreeDoes(name: String, text: String) throws {
        #expect(streamed(text) != nil, "\(name): read by the tree")
        let tree = try load(text, streams: false)
        #expect(try load(text, streams: true) == tree, "\(name)")
        #expect(tree.contains { $0.contains(":") }, "\(name): nothing loaded")
    }

    @Test(arguments: unusualFiles)
    func everythingElseIsLeftToTheTree(name: String, text: String) throws {
        #expect(streamed(text) == nil, "\(name): streamed")
        #expect(try load(text, streams: true) == load(text, streams: false), "\(name)")
    }

    @Test func streamedDevicesKeepTheirPlacesAndLabels() throws {
        let lines = try load(Self.streamedFiles[0].1, streams: true)
        #expect(
            lines == [
                "a fid fAbcdefghijklmnopqrstu [] 11:3 12:10",
                "b token \(Self.token)b [(key: \"model\", value: \"m1\"), (key: \"site\", value: \"s1\")] 6:3 7:12",
            ])
    }

    @Test func theNodeBudgetCountsStreamedScalars() throws {
        let text = "devices:\n" + (0..<20).map { "  d\($0): {token: \(Self.token)\($0), labels: {site: s1}}\n" }.joined()
        // The header alone holds 11 scalars; each device adds 5.
        #expect(streamed(text, budget: 60) == nil)
        let refused = try load(text, streams: true, budget: 60)
        #expect(refused == (try load(text, streams: false, budget: 60)))
        #expect(refused.first?.contains("expands to more than 60 nodes") == true)
        #expect(streamed(text, budget: 200) == 20)
    }
}

/// Devices files cut, doubled and spliced with YAML's special characters: whatever the stream makes of each,
/// it must load exactly as the tree does.
@Suite struct DeviceStreamFuzzTests {
    struct SplitMix {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    static let seed = """
        devices:
          kiosk-1:
            token: c1:APA91bHunvmxsRK5jPbxG8nmtp8B3SKpVJmDZUYmL5Jr1
            labels:
              site: s1
              model: m1
          kiosk-0:
            fid: fAbcdefghijklmnopqrstu
            labels: {site: s2}
          "kiosk 2": {token: 'c1:APA91bHunvmxsRK5jPbxG8nmtp8B3SKpVJmDZUYmL5Jr2', labels: {}}

        """
    static let fragments = [
        "&a ", "*a", "<<: ", "~", "null", "''", "\"", "!!map ", "!!str ", ": ", "- ", "{", "}", "[", "]", ",", "\n", "  ", "#",
        "token", "fid", "labels", "site", "kiosk-1", "kiosk-0",
    ]

    func mutate(_ text: String, _ random: inout SplitMix) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for _ in 0..<(1 + random.next(3)) {
            let line = random.next(lines.count)
            switch random.next(5) {
            case 0: lines.insert(lines[random.next(lines.count)], at: line)
            case 1: lines.remove(at: line)
            case 2:
                var characters = Array(lines[line])
                let at = random.next(characters.count + 1)
                characters.insert(contentsOf: Self.fragments[random.next(Self.fragments.count)], at: at)
                lines[line] = String(characters)
            case 3:
                var characters = Array(lines[line])
                if !characters.isEmpty { characters.remove(at: random.next(characters.count)) }
                lines[line] = String(characters)
            default: lines.swapAt(line, random.next(lines.count))
            }
            if lines.isEmpty { lines = [""] }
        }
        return lines.joined(separator: "\n")
    }

    @Test func mutatedDeviceFilesLoadAsTheTreeLoadsThem() throws {
        var random = SplitMix(state: 35)
        let suite = DeviceStreamTests()
        var streamed = 0
        let cases = 600
        for index in 0..<cases {
            let text = mutate(Self.seed, &random)
            let viaTree = try suite.load(text, streams: false)
            #expect(try suite.load(text, streams: true) == viaTree, "case \(index):\n\(text)")
            if suite.streamed(text) != nil { streamed += 1 }
        }
        // Both ways are exercised: mutations the stream reads, and ones it leaves to the tree.
        #expect(streamed > cases / 10 && streamed < cases * 9 / 10, "\(streamed) of \(cases) streamed")
    }
}
