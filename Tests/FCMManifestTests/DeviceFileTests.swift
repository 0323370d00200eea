import FCMCore
import FCMManifest
import Foundation
import Testing

/// Devices from JSON Lines and CSV files beside a manifest: loaded like YAML devices, every problem at its
/// file, line and column.
@Suite struct DeviceFileTests {
    func directory(_ files: [String: String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-devices-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return url
    }

    static let manifest = """
        project: {id: p, senderId: "42"}
        deviceFiles: [fleet.jsonl, lab.csv]
        topics:
          news: {members: [k1, k2, lab-1, "lab,2"]}

        """

    @Test func jsonLinesAndCSVDevicesJoinTheManifest() throws {
        let dir = try directory([
            "fcmctl.yaml": Self.manifest,
            "fleet.jsonl": "{\"name\": \"k1\", \"token\": \"a:APA91b\", \"labels\": {\"site\": \"nyc\"}}\n\n"
                + "{\"name\": \"k2\", \"fid\": \"cR1rjyj4_KcAPA91bGusQ2\"}\r\n",
            "lab.csv": "\u{FEFF}name,token,labels.site\r\nlab-1,\"b:APA91b\",lon\r\n\"lab,2\",c:APA91b,lon\n",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let loaded = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(loaded.diagnostics.filter { $0.severity == .error }.isEmpty, "\(loaded.diagnostics)")
        let desired = try #require(loaded.desiredState)
        #expect(desired.deviceNames.values.sorted() == ["k1", "k2", "lab,2", "lab-1"])
        let news = try #require(desired.topics["news"])
        #expect(news.members.map(\.value).sorted() == ["a:APA91b", "b:APA91b", "c:APA91b", "cR1rjyj4_KcAPA91bGusQ2"])
        #expect(desired.deviceNames.first { $0.value == "k2" }?.key.kind == .fid)
    }

    @Test func problemsAreReportedAtTheirLine() throws {
        let dir = try directory([
            "fcmctl.yaml": Self.manifest,
            "fleet.jsonl": "{\"name\": \"k1\", \"token\": \"a:APA91b\", \"lables\": {}}\nnot json\n{\"name\": \"k2\", \"fid\": 5}\n"
                + "{\"name\": \"k1\", \"token\": \"d:APA91b\"}\n",
            "lab.csv": "name,token\nlab-1,b:APA91b,extra\n\"lab-2,c:APA91b\n",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let loaded = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(loaded.manifest == nil)
        func at(_ file: String, _ line: Int) -> [String] {
            loaded.diagnostics.filter { ($0.location?.file as NSString?)?.lastPathComponent == file && $0.location?.line == line }.map(\.message)
        }
        #expect(at("fleet.jsonl", 1).contains { $0.hasPrefix("unknown key 'lables' in a device; did you mean 'labels'?") })
        #expect(at("fleet.jsonl", 2) == ["this line is not a JSON object: each line of a JSON Lines device file is one device"])
        #expect(at("fleet.jsonl", 3) == ["device/k2 needs exactly one of 'token' or 'fid', a non-empty string"])
        #expect(at("fleet.jsonl", 4).contains("device/k1 is defined twice in fleet.jsonl; keep one"))
        #expect(at("lab.csv", 2) == ["3 fields where the header has 2"])
        #expect(at("lab.csv", 3) == ["a quoted field is never closed: a double quote is missing"])
    }

    @Test func aMissingFileOrAnUnknownFormatIsNamedAtTheManifest() throws {
        let dir = try directory(["fcmctl.yaml": "project: {id: p, senderId: \"42\"}\ndeviceFiles: [gone.jsonl, devices.xlsx]\ntopics: {}\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let loaded = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        let messages = loaded.diagnostics.map(\.message)
        #expect(messages.contains { $0.hasPrefix("cannot read the device file") && $0.contains("gone.jsonl") })
        #expect(messages.contains("'devices.xlsx' is neither JSON Lines (.jsonl, .ndjson) nor CSV (.csv)"))
        #expect(loaded.diagnostics.allSatisfy { ($0.location?.file as NSString?)?.lastPathComponent == "fcmctl.yaml" })
    }

    /// Device files are read a mebibyte at a time: lines and quoted CSV fields that straddle chunks, and a line
    /// too long to keep, must read as if the file were whole.
    @Test func filesBiggerThanAChunkReadAsIfWhole() throws {
        let token = String(repeating: "t", count: 150)
        var jsonl = ""
        for index in 0..<12_000 { jsonl += "{\"name\": \"j\(index)\", \"token\": \"\(index):\(token)\", \"labels\": {\"site\": \"nyc\"}}\n" }
        let overlongAt = jsonl.utf8.count
        jsonl += "{\"name\": \"huge\", \"token\": \"" + String(repeating: "h", count: 1_200_000) + "\"}\n"
        jsonl += "{\"name\": \"after\", \"token\": \"after:APA91b\"}\nnot json"
        var csv = "name,token,labels.site\n"
        for index in 0..<12_000 { csv += "\"c,\(index)\",\"c\"\"\(index):\(token)\",lon\n" }
        let fine = csv
        csv += "\"multi\nline\",m:APA91b,lon\n"
        let dir = try directory([
            "fcmctl.yaml":
                "project: {id: p, senderId: \"42\"}\ndeviceFiles: [fleet.jsonl, lab.csv]\ntopics:\n  news: {members: {selector: {site: nyc}}}\n",
            "fleet.jsonl": jsonl, "lab.csv": csv,
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(overlongAt > 1 << 20)
        let loaded = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        let errors = loaded.diagnostics.filter { $0.severity == .error }.map {
            "\(($0.location?.file as NSString?)?.lastPathComponent ?? ""):\($0.location?.line ?? 0) \($0.message)"
        }
        #expect(errors.count == 3)
        #expect(
            errors.prefix(2) == [
                "fleet.jsonl:12001 the line is 1 MiB long, more than the 1 MiB a device's line may be; check the export "
                    + "(a missing line break, or a binary file named as a device file)",
                "fleet.jsonl:12003 this line is not a JSON object: each line of a JSON Lines device file is one device",
            ])
        #expect(errors.last?.hasPrefix("lab.csv:12002 a device name holds the control character U+000A") == true)
        // Loaded without the two broken lines, to see every device the reader kept.
        let fixed = jsonl.components(separatedBy: "\n").filter { !$0.contains("hhhh") && $0 != "not json" }.joined(separator: "\n")
        try fixed.write(to: dir.appendingPathComponent("fleet.jsonl"), atomically: true, encoding: .utf8)
        try fine.write(to: dir.appendingPathComponent("lab.csv"), atomically: true, encoding: .utf8)
        let again = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        let desired = try #require(again.desiredState, "\(again.diagnostics)")
        #expect(desired.deviceNames.count == 24_001)
        #expect(desired.topics["news"]?.members.count == 12_000)
        let byName = Dictionary(uniqueKeysWithValues: desired.deviceNames.map { ($0.value, $0.key.value) })
        #expect(byName["j11999"] == "11999:\(token)")
        #expect(byName["c,11999"] == "c\"11999:\(token)")
        #expect(byName["after"] == "after:APA91b")
    }

    /// A device file is not kept once read: what a saved plan compares is its SHA-256, taken as it streamed by.
    @Test func aDeviceFileIsDigestedNotKept() throws {
        let dir = try directory([
            "fcmctl.yaml": "project: {id: p, senderId: \"42\"}\ndeviceFiles: [fleet.jsonl]\ntopics:\n  news: {members: [k1]}\n",
            "fleet.jsonl": "{\"name\": \"k1\", \"token\": \"a:APA91b\"}\n",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let loaded = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(loaded.sources.keys.map { ($0 as NSString).lastPathComponent } == ["fcmctl.yaml"])
        #expect(
            loaded.deviceFileDigests.map { (($0.key as NSString).lastPathComponent, $0.value) }.first! == (
                "fleet.jsonl", "b7c6c53701c869d3af7af337d890c930110bde7b2d611ccc138047a932aa4e37"
            ))
    }

    /// YAML devices and file devices make one table in name order (String's order, beyond ASCII too), a name
    /// in both is reported at both places, and a registration held twice is one whatever kind each says.
    @Test func yamlAndFileDevicesMergeInNameOrder() throws {
        let dir = try directory([
            "fcmctl.yaml": """
            project: {id: p, senderId: "42"}
            deviceFiles: [fleet.jsonl]
            devices:
              zeta: {token: "z:APA91b", labels: {site: nyc}}
              émile:
                token: "e:APA91b"
              alpha: {fid: "cR1rjyj4_KcAPA91bGusQ2"}
            topics:
              news: {members: {selector: {site: nyc}}}

            """,
            "fleet.jsonl": "{\"name\": \"beta\", \"token\": \"b:APA91b\", \"labels\": {\"site\": \"nyc\"}}\n"
                + "{\"name\": \"Émile\", \"token\": \"E:APA91b\"}\n",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let loaded = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(loaded.diagnostics.filter { $0.severity == .error }.isEmpty, "\(loaded.diagnostics)")
        let resolution = try #require(loaded.resolution)
        let names = Array(resolution.devices.names)
        #expect(names == ["alpha", "beta", "zeta", "Émile", "émile"].sorted())
        #expect(names == names.sorted())
        #expect(resolution.devices.registration(at: try #require(names.firstIndex(of: "émile")))?.value == "e:APA91b")
        // The registration's own line, under the device's.
        let emile = try #require(loaded.manifest?.devices["émile"])
        #expect(emile.location.line == 5 && emile.registration?.location.line == 6 && emile.registration?.location.column == 12)
        #expect(loaded.desiredState?.topics["news"]?.members.map(\.value).sorted() == ["b:APA91b", "z:APA91b"])

        try "{\"name\": \"zeta\", \"token\": \"y:APA91b\"}\n{\"name\": \"gamma\", \"token\": \"cR1rjyj4_KcAPA91bGusQ2\"}\n".write(
            to: dir.appendingPathComponent("fleet.jsonl"), atomically: true, encoding: .utf8)
        let clash = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        let messages = clash.diagnostics.filter { $0.severity == .error }.map { "\($0.location?.line ?? 0) \($0.message)" }
        #expect(messages.contains { $0.hasPrefix("4 device/zeta is defined twice (also at ") && $0.hasSuffix("fleet.jsonl:1)") })
        #expect(messages.contains { $0.hasPrefix("1 device/zeta is defined twice (also at ") && $0.hasSuffix("fcmctl.yaml:4)") })
        #expect(messages.contains("2 device/gamma has the same registration as device/alpha: keep one of them"))
    }
}
