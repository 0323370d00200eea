import Foundation
import Testing

@testable import FCMManifest

/// The fast reader of a JSON Lines device must agree with `JSONSerialization` on every line it accepts, and
/// hand every line it does not know to it: it must never accept a line JSON does not, nor read one differently.
@Suite struct DeviceLineTests {
    static func reference(_ line: String) -> DeviceLine? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        guard Set(object.keys).isSubset(of: ["name", "token", "fid", "labels"]) else { return nil }
        var device = DeviceLine()
        for (key, value) in object where key != "labels" {
            guard let text = value as? String else { return nil }
            switch key {
            case "name": device.name = text
            case "token": device.token = text
            default: device.fid = text
            }
        }
        if let labels = object["labels"] {
            guard let map = labels as? [String: Any], map.values.allSatisfy({ $0 is String }) else { return nil }
            device.labels = map.mapValues { $0 as! String }
        }
        return device
    }

    static func fast(_ line: String) -> DeviceLine? { DeviceLine.parse(Array(line.utf8)[...]) }

    @Test(arguments: [
        #"{"name": "k1", "token": "a:APA91b", "labels": {"site": "nyc", "tier": "free"}}"#,
        #"{"fid":"cR1rjyj4_KcAPA91bGusQ2","name":"k2"}"#,
        #"  { "name" : "東京-1" , "token" : "b:APA91b" , "labels" : { } }  "#,
        #"{}"#,
        #"{"labels": {"é": "ß"}, "name": "x"}"#,
    ])
    func readsWhatExportsWrite(line: String) throws {
        let fast = try #require(Self.fast(line))
        #expect(fast == Self.reference(line))
    }

    @Test(arguments: [
        #"{"name": "k\"1", "token": "a"}"#,  // an escape: JSONSerialization decodes it
        #"{"name": "k1", "token": "a", "name": "k2"}"#,  // a repeated key
        #"{"name": "k1", "lables": {}}"#,  // an unknown key, for its error
        #"{"name": "k1", "fid": 5}"#,  // a number, for its error
        #"{"name": "k1", "labels": {"a": "b", "a": "c"}}"#,
        #"{"name": "k1", "labels": {"a": 1}}"#,
        #"{"name": "k1"} trailing"#,
        #"{"name": "k1",}"#,
        #"{"name": "k1""#,
        #"not json"#,
        "\u{FEFF}{\"name\": \"k1\"}",
        "{\"name\": \"k\u{1}1\"}",
        #"{"name": "k1", "labels": null}"#,
        #"["name"]"#,
    ])
    func leavesEverythingElseToJSONSerialization(line: String) {
        #expect(Self.fast(line) == nil)
    }

    @Test func invalidUTF8IsLeftToJSONSerialization() {
        var bytes = Array(#"{"name": "k1", "token": "a"}"#.utf8)
        bytes[10] = 0xFF
        #expect(DeviceLine.parse(bytes[...]) == nil)
    }

    /// Random lines built from the pieces exports and their mistakes are made of: whatever the fast reader
    /// accepts, JSONSerialization reads the same.
    @Test func randomLinesAgreeWithJSONSerialization() {
        var generator = SystemRandomNumberGenerator()
        let keys = [#""name""#, #""token""#, #""fid""#, #""labels""#, #""lables""#, #""Name""#]
        let values = [#""k1""#, #""a:APA91b""#, #""""#, #""é東""#, #""a\"b""#, "5", "null", "true", #"{"site": "nyc"}"#, "{}", #"{"a": 1}"#, "[]"]
        let gaps = ["", " ", "\t", "  "]
        var accepted = 0
        for _ in 0..<5_000 {
            var line = gaps.randomElement(using: &generator)! + "{"
            let count = Int.random(in: 0...4, using: &generator)
            for index in 0..<count {
                if index > 0 { line += "," + gaps.randomElement(using: &generator)! }
                line += keys.randomElement(using: &generator)! + gaps.randomElement(using: &generator)! + ":"
                line += gaps.randomElement(using: &generator)! + values.randomElement(using: &generator)!
            }
            line += "}" + (Int.random(in: 0..<20, using: &generator) == 0 ? "x" : gaps.randomElement(using: &generator)!)
            if let fast = Self.fast(line) {
                accepted += 1
                #expect(fast == Self.reference(line), "\(line)")
            }
        }
        #expect(accepted > 100, "the generator should make many lines the fast reader takes")
    }
}
