/// RFC 4180 rows from a device file's lines: comma-separated fields, double quotes around a field that holds
/// commas, quotes or line breaks (a quote inside doubled), LF or CRLF line ends. Each row knows the line it
/// starts on.
struct CSVRows {
    struct Row {
        var fields: [String]
        var line: Int
    }

    private var lines: DeviceFileLines
    private var first = true
    /// The line the next row starts on, then (after a problem) the line it was met on.
    var line = 1
    private(set) var problem: String?

    init(_ lines: DeviceFileLines) { self.lines = lines }

    /// The lines, read as far as the rows were.
    var source: DeviceFileLines { lines }

    mutating func next() throws -> Row? {
        guard problem == nil else { return nil }
        let start = line
        var rowBytes = 0
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var startedAny = false
        while let item = try lines.next() {
            line += 1
            guard case .line(var bytes, let terminated) = item else {
                problem = DeviceFileReader.tooLong(nil)
                line = start
                return nil
            }
            startedAny = true
            // A UTF-8 byte order mark, as spreadsheet exports write, is not part of the first column's name.
            if first {
                first = false
                if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
            }
            rowBytes += bytes.count + 1
            if rowBytes > DeviceFileReader.maximumLineBytes + 1 {
                problem = DeviceFileReader.tooLong(nil)
                line = start
                return nil
            }
            var index = bytes.startIndex
            while index < bytes.endIndex {
                let byte = bytes[index]
                index += 1
                if quoted {
                    if byte == UInt8(ascii: "\"") {
                        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                            field.append(byte)
                            index += 1
                        } else {
                            quoted = false
                        }
                    } else {
                        field.append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\"") where field.isEmpty: quoted = true
                case UInt8(ascii: ","):
                    fields.append(String(decoding: field, as: UTF8.self))
                    field.removeAll(keepingCapacity: true)
                case UInt8(ascii: "\r") where index == bytes.endIndex && terminated: continue
                default: field.append(byte)
                }
            }
            if quoted {
                // A line break inside quotes belongs to the field; the row goes on on the next line.
                if terminated { field.append(UInt8(ascii: "\n")) }
                continue
            }
            fields.append(String(decoding: field, as: UTF8.self))
            return Row(fields: fields, line: start)
        }
        guard startedAny else { return nil }
        if quoted {
            problem = "a quoted field is never closed: a double quote is missing"
            line = start
            return nil
        }
        fields.append(String(decoding: field, as: UTF8.self))
        return Row(fields: fields, line: start)
    }
}
