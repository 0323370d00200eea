/// RFC 4180 rows from bytes: comma-separated fields, double quotes around a field that holds commas,
/// quotes or line breaks (a quote inside doubled), LF or CRLF line ends. Each row knows the line it starts on.
struct CSVRows {
    struct Row {
        var fields: [String]
        var line: Int
    }

    let bytes: [UInt8]
    var index = 0
    /// The line the next row starts on, then (after a problem) the line it was met on.
    var line = 1
    private(set) var problem: String?

    init(_ bytes: [UInt8]) {
        // A UTF-8 byte order mark, as spreadsheet exports write, is not part of the first column's name.
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    mutating func next() -> Row? {
        guard index < bytes.count, problem == nil else { return nil }
        let start = line
        let startIndex = index
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        while index < bytes.count {
            if index - startIndex > DeviceFileReader.maximumLineBytes {
                problem = DeviceFileReader.tooLong(nil)
                line = start
                return nil
            }
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\"") where field.isEmpty: quoted = true
            case UInt8(ascii: ","):
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
            case UInt8(ascii: "\r") where index < bytes.count && bytes[index] == UInt8(ascii: "\n"): continue
            case UInt8(ascii: "\n"):
                line += 1
                fields.append(String(decoding: field, as: UTF8.self))
                return Row(fields: fields, line: start)
            default: field.append(byte)
            }
        }
        if quoted {
            problem = "a quoted field is never closed: a double quote is missing"
            line = start
            return nil
        }
        fields.append(String(decoding: field, as: UTF8.self))
        return Row(fields: fields, line: start)
    }
}
