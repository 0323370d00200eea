import FCMCore
import Foundation

/// Devices from the files the systems that hold them write: JSON Lines (`{"name": …, "token"|"fid": …,
/// "labels": {…}}` per line) and CSV (a header of `name`, `token`, `fid` and `labels.KEY` columns). A token
/// rotation is then an edit of one line. Every problem is reported at its file, line and column, like YAML's.
struct DeviceFileReader {
    var diagnostics: [Diagnostic] = []
    /// The devices read, as columns (no `ManifestDevice` is kept per device).
    var devices = DeviceTable()
    /// A name defined a second time: the later place and the first.
    var duplicates: [(name: String, at: SourceLocation, first: SourceLocation)] = []

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

    /// Reads `lines` to their end (or to a problem that stops the file).
    mutating func read(_ lines: inout DeviceFileLines, file: String, format: Format) throws {
        switch format {
        case .jsonLines: try jsonLines(&lines, file: file)
        case .csv: try csv(&lines, file: file)
        }
    }

    mutating func error(_ message: String, _ file: String, _ line: Int, _ column: Int = 1) {
        diagnostics.append(.error(message, at: SourceLocation(file: file, line: line, column: column)))
    }

    // MARK: JSON Lines

    mutating func jsonLines(_ lines: inout DeviceFileLines, file: String) throws {
        var lineNumber = 0
        var consumed = 0
        while let item = try lines.next() {
            lineNumber += 1
            if lineNumber == Self.sampleLines { expect(lines.size, sampled: consumed, lines: lineNumber - 1) }
            if case .line(let line, _) = item { consumed += line.count + 1 }
            guard case .line(let line, _) = item else {
                if case .overlong(let count) = item { error(Self.tooLong(count), file, lineNumber) }
                continue
            }
            let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            if trimmed.count > Self.maximumLineBytes {
                error(Self.tooLong(trimmed.count), file, lineNumber)
                continue
            }
            if trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            if let line = DeviceLine.parse(trimmed) {
                device(name: line.name, token: line.token, fid: line.fid, labels: line.labels, file: file, line: lineNumber, column: 1)
                continue
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(trimmed)) as? [String: Any] else {
                error("this line is not a JSON object: each line of a JSON Lines device file is one device", file, lineNumber)
                continue
            }
            jsonDevice(object, file: file, line: lineNumber)
        }
    }

    static let sampleLines = 4096

    /// A big file's devices, estimated from its size and its first lines' length (with 3 % to spare), are given
    /// room at once: the device table's columns and the registration index grow once, not by doubling.
    mutating func expect(_ size: Int, sampled bytes: Int, lines: Int) {
        guard size >= 64 << 20, bytes > 0, lines > 0 else { return }
        let more = Int(Double(size - bytes) / (Double(bytes) / Double(lines)) * 1.03)
        devices.expect(more: more)
        RegistrationTable.shared.reserve(RegistrationTable.shared.count + more)
    }

    mutating func jsonDevice(_ object: [String: Any], file: String, line: Int) {
        for key in object.keys.sorted() where !Self.jsonKeys.contains(key) {
            let hint = Suggestions.hint(for: key, in: Self.jsonKeys)
            error("unknown key '\(key)' in a device\(hint); a device has name, token or fid, and labels", file, line)
        }
        var labels: [String: String] = [:]
        if let raw = object["labels"] {
            guard let map = raw as? [String: Any], map.values.allSatisfy({ $0 is String }) else {
                error("'labels' must be an object of strings, e.g. {\"site\": \"nyc\"}", file, line)
                return
            }
            labels = map.mapValues { $0 as! String }
        }
        device(name: object["name"], token: object["token"], fid: object["fid"], labels: labels, file: file, line: line, column: 1)
    }

    mutating func device(name: Any?, token: Any?, fid: Any?, labels: [String: String], file: String, line: Int, column: Int) {
        guard let name = name as? String, !name.isEmpty else {
            error("a device needs a non-empty string 'name'", file, line, column)
            return
        }
        let ids: [(Registration.Kind, Any)] = [(.token, token), (.fid, fid)].compactMap { kind, value in value.map { (kind, $0) } }
        guard ids.count == 1, let text = ids[0].1 as? String, !text.isEmpty else {
            error("device/\(name) needs exactly one of 'token' or 'fid', a non-empty string", file, line, column)
            return
        }
        // Label sets repeat (an export has a few combinations over millions of devices): the table keeps each
        // once, so only a new one is worth making native.
        let native = labels.isEmpty ? labels : Dictionary(uniqueKeysWithValues: labels.map { (Self.native($0.key), Self.native($0.value)) })
        if let first = devices.append(
            name: Self.native(name), registration: Registration(value: text, kind: ids[0].0), labels: native, file: file, line: line,
            column: column)
        {
            duplicates.append((name, SourceLocation(file: file, line: line, column: column), devices.location(at: first)))
        }
    }

    /// Strings from JSONSerialization are bridged NSStrings, slow to hash and compare for the rest of the
    /// run: made native once here, so a fleet from JSON Lines plans as fast as one from YAML.
    static func native(_ text: String) -> String {
        var copy = text
        copy.makeContiguousUTF8()
        return copy
    }

    // MARK: CSV

    mutating func csv(_ lines: inout DeviceFileLines, file: String) throws {
        var rows = CSVRows(lines)
        // The rows read the lines; what they read is handed back, so the caller's count and digest cover it.
        defer { lines = rows.source }
        guard let header = try rows.next() else {
            error("the CSV device file is empty: its first line names the columns (name, token, fid, labels.KEY)", file, 1)
            return
        }
        if let problem = rows.problem {
            error(problem, file, rows.line)
            return
        }
        var columns: [String: Int] = [:]
        for (index, name) in header.fields.enumerated() {
            guard ["name", "token", "fid"].contains(name) || (name.hasPrefix("labels.") && name.count > 7) else {
                let hint = Suggestions.hint(for: name, in: ["name", "token", "fid"])
                error("unknown column '\(name)'\(hint); columns are name, token, fid and labels.KEY", file, header.line)
                return
            }
            if columns.updateValue(index, forKey: name) != nil { error("column '\(name)' appears twice", file, header.line) }
        }
        guard columns["name"] != nil else {
            error("the header has no 'name' column", file, header.line)
            return
        }
        let labelColumns = columns.filter { $0.key.hasPrefix("labels.") }.map { (String($0.key.dropFirst(7)), $0.value) }
        while let row = try rows.next() {
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
            device(name: value("name"), token: value("token"), fid: value("fid"), labels: labels, file: file, line: row.line, column: 1)
        }
        if let problem = rows.problem { error(problem, file, rows.line) }
    }
}

/// Whether a path names a device file, by its extension: what the commands count apart from YAML devices.
package enum DeviceFileFormat {
    package static func isDeviceFile(_ path: String) -> Bool { DeviceFileReader.Format(path: path) != nil }
}
