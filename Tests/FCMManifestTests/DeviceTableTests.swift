import FCMCore
import FCMTestSupport
import Foundation
import Testing

@testable import FCMManifest

/// `DeviceTable.merge` copies columns and matches label sets by their bytes; these compare it with appending
/// the other table's devices one at a time, and its label sets with String equality.
@Suite struct DeviceTableTests {
    struct Entry {
        var name: String
        var labels: [String: String]
        var file: String
        var line: Int
        var column: Int
        var registration: String?
        var registrationLine: Int?
        var registrationElsewhere = false
        /// Labels as the YAML decoder gives them (pairs as written), not as a device file's reader (a dictionary).
        var asWritten = false
    }

    static let labelChoices: [[String: String]] = [
        [:], ["site": "s1"], ["site": "s1", "model": "m1"], ["model": "m1", "site": "s1"], ["site": "K"], ["site": "\u{212A}"],
        ["site": "caf\u{E9}"], ["site": "cafe\u{301}"], ["sit": "es1"], ["site": "s1", "model": "m2"], ["": ""], ["a\u{0}b": "c"],
    ]

    static func entries(seed: UInt64, count: Int, files: [String]) -> [Entry] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { index in
            let registered = generator.next() % 4 != 0
            // Some tables have every device at column 1 and its registration with it (a device file's), others
            // not (YAML's); merged each way round.
            let indented = seed % 2 == 0 && generator.next() % 3 == 0
            var entry = Entry(
                name: "d-\(generator.next() % UInt64(count * 2))", labels: labelChoices[Int(generator.next() % UInt64(labelChoices.count))],
                file: files[Int(generator.next() % UInt64(files.count))], line: index + 1, column: indented ? 3 : 1,
                registration: registered ? "tok-\(seed)-\(index):APA91b" : nil,
                registrationLine: seed % 3 != 0 && generator.next() % 2 == 0 ? index + 2 : nil)
            entry.registrationElsewhere = generator.next() % 10 == 0
            entry.asWritten = seed % 4 < 2
            return entry
        }
    }

    static func table(_ entries: [Entry]) -> DeviceTable {
        var table = DeviceTable()
        for entry in entries { add(entry, to: &table) }
        return table
    }

    @discardableResult
    static func add(_ entry: Entry, to table: inout DeviceTable) -> Int? {
        let registration = entry.registration.map { Registration(value: $0, kind: .token) }
        let taken =
            entry.asWritten
            ? table.append(
                name: entry.name, registration: registration, labels: entry.labels.map { ($0.key, $0.value) }, file: entry.file, line: entry.line,
                column: entry.column)
            : table.append(
                name: entry.name, registration: registration, labels: entry.labels, file: entry.file, line: entry.line, column: entry.column)
        if taken == nil, let line = entry.registrationLine {
            let file = entry.registrationElsewhere ? "elsewhere.yaml" : entry.file
            table.setRegistrationLocation(SourceLocation(file: file, line: line, column: 5), at: table.count - 1)
        }
        return taken
    }

    static func expectSameDevices(_ a: DeviceTable, _ b: DeviceTable) {
        #expect(a.count == b.count)
        for position in 0..<min(a.count, b.count) {
            #expect(a.name(at: position) == b.name(at: position))
            #expect(a.registration(at: position) == b.registration(at: position))
            #expect(a.labels(at: position) == b.labels(at: position))
            #expect(a.location(at: position) == b.location(at: position))
            #expect(a.registrationLocation(at: position) == b.registrationLocation(at: position))
        }
    }

    /// Two devices share a label set exactly when their labels are equal Strings, and no two sets are equal.
    static func expectLabelSetsCanonical(_ table: DeviceTable) {
        for set in table.labelSets.indices {
            for other in table.labelSets.indices where other > set { #expect(table.labelSets[set] != table.labelSets[other]) }
        }
        for position in 0..<table.count {
            #expect(table.labelSets[table.labelSet(at: position)] == table.labels(at: position))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func mergeAgreesWithAppendingOneByOne(seed: UInt64) {
        let first = Self.entries(seed: seed, count: 60, files: ["a.yaml", "b.yaml"])
        let second = Self.entries(seed: seed + 101, count: 60, files: ["b.yaml", "c.yaml"])
        var merged = Self.table(first)
        let incoming = Self.table(second)
        let duplicates = merged.merge(incoming)

        var expected = Self.table(first)
        var expectedDuplicates: [(Int, Int)] = []
        for position in 0..<incoming.count {
            let device = incoming.device(at: position)
            let written = incoming.registrationLocation(at: position)
            if let taken = expected.append(
                name: device.name, registration: incoming.registration(at: position), labels: device.labels, file: device.location.file,
                line: device.location.line, column: device.location.column)
            {
                expectedDuplicates.append((taken, position))
            } else {
                expected.setRegistrationLocation(written, at: expected.count - 1)
            }
        }
        Self.expectSameDevices(merged, expected)
        #expect(duplicates.map(\.0) == expectedDuplicates.map(\.0))
        #expect(duplicates.map(\.1) == expectedDuplicates.map(\.1))
        Self.expectLabelSetsCanonical(merged)
        #expect(merged.countsByFile() == expected.countsByFile())
        Self.expectSameDevices(merged.sortedByName(), expected.sortedByName())
        for position in 0..<merged.count { #expect(merged.position(of: merged.name(at: position)) == position) }
    }

    /// Room made at once for a big file's estimated devices, then more devices than estimated: every name and
    /// registration is still found, and a name given twice is still told.
    @Test func roomMadeForAnEstimateKeepsEveryDeviceFindable() {
        var table = DeviceTable()
        for index in 0..<5 {
            #expect(table.append(name: "early\(index)", registration: nil, labels: [:], file: "f", line: index + 1, column: 1) == nil)
        }
        table.expect(more: 300)
        for index in 0..<700 {
            let registration = Registration(value: "estimate\(index):APA91b" + String(repeating: "e", count: 30), kind: .token)
            #expect(table.append(name: "device-\(index)", registration: registration, labels: [:], file: "f", line: index + 6, column: 1) == nil)
        }
        #expect(table.count == 705)
        for index in 0..<700 {
            let position = table.position(of: "device-\(index)")
            #expect(position.flatMap(table.registration(at:))?.value == "estimate\(index):APA91b" + String(repeating: "e", count: 30))
        }
        #expect(table.position(of: "early3") != nil && table.position(of: "device-700") == nil)
        #expect(table.append(name: "device-5", registration: nil, labels: [:], file: "f", line: 999, column: 1) != nil, "a duplicate is told")
    }

    @Test func labelsEqualAsStringsShareASetWhateverTheirBytesOrOrder() {
        for order in [["K", "\u{212A}"], ["\u{212A}", "K"], ["caf\u{E9}", "cafe\u{301}"]] {
            var table = DeviceTable()
            for (index, site) in order.enumerated() {
                _ = table.append(name: "d\(index)", registration: nil, labels: ["site": site], file: "f", line: index + 1, column: 1)
            }
            #expect(table.labelSet(at: 0) == table.labelSet(at: 1))
            // The same across tables: the merged one matches the incoming set with its own.
            var left = DeviceTable()
            _ = left.append(name: "x", registration: nil, labels: ["site": order[0], "model": "m"], file: "f", line: 1, column: 1)
            var right = DeviceTable()
            _ = right.append(name: "y", registration: nil, labels: ["model": "m", "site": order[1]], file: "g", line: 1, column: 1)
            _ = left.merge(right)
            #expect(left.labelSet(at: 0) == left.labelSet(at: 1))
            Self.expectLabelSetsCanonical(left)
        }
    }

    @Test func labelSetKeyTellsSetsApartAndRefusesWhatItCannotCompareByBytes() {
        #expect(LabelSetKey([("a", "b"), ("c", "d")]) == LabelSetKey([("c", "d"), ("a", "b")]))
        #expect(LabelSetKey([("ab", "")]) != LabelSetKey([("a", "b")]))
        #expect(LabelSetKey([("a", "bc")]) != LabelSetKey([("a", "b"), ("c", "")]))
        #expect(LabelSetKey([("site", "\u{212A}")]) == nil)
        #expect(LabelSetKey([("a", "1"), ("a", "2")]) == nil)
    }

    @Test func yamlDevicesWrittenOutOfOrderLoadInNameOrderWithTheirPlaces() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-device-table-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try """
        apiVersion: fcmctl/v1
        project: {id: p, senderId: "42"}
        devices:
          zed:
            token: zzz:APA91b
            labels: {site: "\u{212A}"}
          alpha:
            labels: {site: K}
            fid: cAAAAAAAAAAAAAAAAAAAAA
        topics:
          kelvin:
            members:
              selector: {site: K}
        """.write(to: dir.appendingPathComponent("a.yaml"), atomically: true, encoding: .utf8)
        let loaded = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        let devices = try #require(loaded.resolution?.devices)
        #expect(Array(devices.names) == ["alpha", "zed"])
        #expect(devices.location(at: 0).line == 7)
        #expect(devices.registrationLocation(at: 0).line == 9)
        #expect(devices.registrationLocation(at: 1).line == 5)
        #expect(devices.labelSet(at: 0) == devices.labelSet(at: 1))
        #expect(loaded.resolution?.topicMembers["kelvin"]?.devices == [0, 1])
    }

    @Test func duplicateKeysAreReportedAlikeInSmallAndLargeMappings() {
        for size in [4, YAMLReaderSizes.small, YAMLReaderSizes.small + 1, 20] {
            var keys = (0..<size).map { "k\($0)" }
            keys[size - 1] = "k0"
            keys[size - 2] = "k0"
            let text = keys.enumerated().map { "\($0.element): \($0.offset)" }.joined(separator: "\n") + "\n"
            let (_, diagnostics) = YAMLReader().read(Array(text.utf8), file: "m.yaml")
            #expect(diagnostics.map(\.message) == Array(repeating: "duplicate key 'k0' (first defined at line 1, column 1)", count: 2))
            #expect(diagnostics.compactMap(\.location?.line) == [size - 1, size])
        }
    }
}

private enum YAMLReaderSizes {
    /// The largest mapping whose keys are compared pair by pair (`EventSession.smallMapping`).
    static let small = 8
}
