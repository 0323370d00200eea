import FCMCore
import Foundation

/// Devices from the files the systems that hold them write: JSON Lines (`{"name": …, "token"|"fid": …,
/// "labels": {…}}` per line) and CSV (a header of `name`, `token`, `fid` and `labels.KEY` columns). A token
/// rotation is then an edit of one line. Every problem is reported at its file, line and column, like YAML's.
struct DeviceFileReader {
    var diagnostics: [Diagnostic] = []
    /// Label sets seen so far: an export repeats a few combinations (country, language, tier) over millions of
    /// devices, and devices with equal labels share one dictionary's storage instead of holding a copy each.
    private var labelSets = Set<[String: String]>()

    enum Format {
        case jsonLines
        case csv

        init?(path: String) {
            switch (path as NSString).pathExtension.lowercased() {
            case "jsonl", "ndjson": self = .jsonLines
            case "csv": self = .csv
            default: return nil
            }
        }
    }

    static let jsonKeys = ["name", "token", "fid", "labels"]

    /// A device's line is a few hundred bytes; one of a mebibyte is a broken export, and parsing a gigabyte
    /// line would take several gigabytes of memory before saying so.
    static let maximumLineBytes = 1_048_576

    /// `bytes`: the line's length, when it was measured to its end.
    static func tooLong(_ bytes: Int?) -> String {
        let size = bytes.map { "\($0 / 1_048_576) MiB long" } ?? "longer than 1 MiB"
        return "the line is \(size), more than the 1 MiB a device's line may be; check the export "
            + "(a missing line break, or a binary file named as a device file)"
    }

    mutating func read(_ bytes: [UInt8], file: String, format: Format) -> [ManifestDevice] {
        switch format {
        case .jsonLines: return jsonLines(bytes, file: file)
        case .csv: return csv(bytes, file: file)
        }
    }

    mutating func error(_ message: String, _ file: String, _ line: Int, _ column: Int = 1) {
        diagnostics.append(.error(message, at: SourceLocation(file: file, line: line, column: column)))
    }

    // MARK: JSON Lines

    mutating func jsonLines(_ bytes: [UInt8], file: String) -> [ManifestDevice] {
        var devices: [ManifestDevice] = []
        var lineNumber = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            if trimmed.count > Self.maximumLineBytes {
                error(Self.tooLong(trimmed.count), file, lineNumber)
                continue
            }
            if trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            if let line = DeviceLine.parse(trimmed) {
                if let device = device(
                    name: line.name, token: line.token, fid: line.fid, labels: line.labels, file: file, line: lineNumber, column: 1)
                {
                    devices.append(device)
                }
                continue
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(trimmed)) as? [String: Any] else {
                error("this line is not a JSON object: each line of a JSON Lines device file is one device", file, lineNumber)
                continue
            }
            if let device = jsonDevice(object, file: file, line: lineNumber) { devices.append(device) }
        }
        return devices
    }

    mutating func jsonDevice(_ object: [String: Any], file: String, line: Int) -> ManifestDevice? {
        for key in object.keys.sorted() where !Self.jsonKeys.contains(key) {
            let hint = Suggestions.hint(for: key, in: Self.jsonKeys)
            error("unknown key '\(key)' in a device\(hint); a device has name, token or fid, and labels", file, line)
        }
        var labels: [String: String] = [:]
        if let raw = object["labels"] {
            guard let map = raw as? [String: Any], map.values.allSatisfy({ $0 is String }) else {
                error("'labels' must be an object of strings, e.g. {\"site\": \"nyc\"}", file, line)
                return nil
            }
            labels = map.mapValues { $0 as! String }
        }
        return device(name: object["name"], token: object["token"], fid: object["fid"], labels: labels, file: file, line: line, column: 1)
    }

    mutating func device(name: Any?, token: Any?, fid: Any?, labels: [String: String], file: String, line: Int, column: Int) -> ManifestDevice? {
        guard let name = name as? String, !name.isEmpty else {
            error("a device needs a non-empty string 'name'", file, line, column)
            return nil
        }
        let ids: [(Registration.Kind, Any)] = [(.token, token), (.fid, fid)].compactMap { kind, value in value.map { (kind, $0) } }
        guard ids.count == 1, let text = ids[0].1 as? String, !text.isEmpty else {
            error("device/\(name) needs exactly one of 'token' or 'fid', a non-empty string", file, line, column)
            return nil
        }
        let location = SourceLocation(file: file, line: line, column: column)
        return ManifestDevice(
            name: Self.native(name), registration: Located(Self.native(text), at: location), kind: ids[0].0,
            labels: shared(labels), location: location)
    }

    mutating func shared(_ labels: [String: String]) -> [String: String] {
        guard !labels.isEmpty else { return [:] }
        let native = Dictionary(uniqueKeysWithValues: labels.map { (Self.native($0.key), Self.native($0.value)) })
        if let existing = labelSets.firstIndex(of: native) { return labelSets[existing] }
        labelSets.insert(native)
        return native
    }

    /// Strings from JSONSerialization are bridged NSStrings, slow to hash and compare for the rest of the
    /// run: made native once here, so a fleet from JSON Lines plans as fast as one from YAML.
    static func native(_ text: String) -> String {
        var copy = text
        copy.makeContiguousUTF8()
        return copy
    }

    // MARK: CSV

    mutating func csv(_ bytes: [UInt8], file: String) -> [ManifestDevice] {
        var rows = CSVRows(bytes)
        guard let header = rows.next() else {
            error("the CSV device file is empty: its first line names the columns (name, token, fid, labels.KEY)", file, 1)
            return []
        }
        if let problem = rows.problem {
            error(problem, file, rows.line)
            return []
        }
        var columns: [String: Int] = [:]
        for (index, name) in header.fields.enumerated() {
            guard ["name", "token", "fid"].contains(name) || (name.hasPrefix("labels.") && name.count > 7) else {
                let hint = Suggestions.hint(for: name, in: ["name", "token", "fid"])
                error("unknown column '\(name)'\(hint); columns are name, token, fid and labels.KEY", file, header.line)
                return []
            }
            if columns.updateValue(index, forKey: name) != nil { error("column '\(name)' appears twice", file, header.line) }
        }
        guard columns["name"] != nil else {
            error("the header has no 'name' column", file, header.line)
            return []
        }
        let labelColumns = columns.filter { $0.key.hasPrefix("labels.") }.map { (String($0.key.dropFirst(7)), $0.value) }
        var devices: [ManifestDevice] = []
        while let row = rows.next() {
            if row.fields == [""] { continue }
            guard row.fields.count == header.fields.count else {
                error("\(row.fields.count) fields where the header has \(header.fields.count)", file, row.line)
                continue
            }
            func value(_ column: String) -> String? {
                columns[column].map { row.fields[$0] }.flatMap { $0.isEmpty ? nil : $0 }
            }
            var labels: [String: String] = [:]
            for (key, index) in labelColumns where !row.fields[index].isEmpty { labels[key] = row.fields[index] }
            if let device = device(
                name: value("name"), token: value("token"), fid: value("fid"), labels: labels, file: file, line: row.line, column: 1)
            {
                devices.append(device)
            }
        }
        if let problem = rows.problem { error(problem, file, rows.line) }
        return devices
    }
}

/// Whether a path names a device file, by its extension: what the commands count apart from YAML devices.
package enum DeviceFileFormat {
    package static func isDeviceFile(_ path: String) -> Bool { DeviceFileReader.Format(path: path) != nil }
}
