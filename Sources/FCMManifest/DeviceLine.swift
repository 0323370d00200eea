/// One JSON Lines device read straight from its bytes, for the shape every export writes: an object whose keys
/// are among `name`, `token`, `fid` and `labels`, each once, with string values (`labels` an object of strings),
/// and no escape in any string. Anything else (an escape, a number, an unknown or repeated key, invalid UTF-8,
/// text after the object) is `nil`, and the caller reads the line with `JSONSerialization`, which says what is
/// wrong: this reader never decides that a line is bad.
///
/// Why: `JSONSerialization` builds bridged objects for every line, about 20 µs and a few hundred bytes of
/// garbage a device, which at ten million devices was most of `validate`'s three minutes.
struct DeviceLine: Equatable {
    var name: String?
    var token: String?
    var fid: String?
    var labels: [String: String] = [:]

    static func parse(_ line: ArraySlice<UInt8>) -> DeviceLine? {
        line.withUnsafeBufferPointer { bytes in
            var reader = Reader(bytes: bytes)
            return reader.device()
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func device() -> DeviceLine? {
            var device = DeviceLine()
            var seen: UInt8 = 0
            guard consume(UInt8(ascii: "{")) else { return nil }
            if consume(UInt8(ascii: "}")) { return finished() ? device : nil }
            repeat {
                guard let key = string(), consume(UInt8(ascii: ":")) else { return nil }
                let bit: UInt8
                switch key {
                case "name": bit = 1
                case "token": bit = 2
                case "fid": bit = 4
                case "labels": bit = 8
                default: return nil
                }
                guard seen & bit == 0 else { return nil }
                seen |= bit
                if bit == 8 {
                    guard let labels = labels() else { return nil }
                    device.labels = labels
                } else {
                    guard let value = string() else { return nil }
                    switch bit {
                    case 1: device.name = value
                    case 2: device.token = value
                    default: device.fid = value
                    }
                }
            } while consume(UInt8(ascii: ","))
            guard consume(UInt8(ascii: "}")), finished() else { return nil }
            return device
        }

        mutating func labels() -> [String: String]? {
            var labels: [String: String] = [:]
            guard consume(UInt8(ascii: "{")) else { return nil }
            if consume(UInt8(ascii: "}")) { return labels }
            repeat {
                guard let key = string(), consume(UInt8(ascii: ":")), let value = string(),
                    labels.updateValue(value, forKey: key) == nil
                else { return nil }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}")) ? labels : nil
        }

        /// A string without escapes or raw control characters, as valid UTF-8.
        mutating func string() -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                index += 1
            }
            return nil
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func finished() -> Bool {
            skipSpace()
            return index == bytes.count
        }
    }
}
