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
}
