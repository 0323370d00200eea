import Foundation

/// A small JSON writer for the emulator's answers: sorted keys, no escaped slashes, like
/// JSONSerialization with those options, but without its per-call cost on the hot path.
enum FastJSON {
    static func data(_ value: Any) -> Data {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(value, into: &out)
        return Data(out)
    }

    static func write(_ value: Any, into out: inout [UInt8]) {
        switch value {
        case let raw as RawJSON: out += raw.text.utf8
        case let text as String: writeString(text, into: &out)
        case let flag as Bool: out += flag ? Array("true".utf8) : Array("false".utf8)
        case let number as Int: out += Array(String(number).utf8)
        case let number as Double:
            out += Array((number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)).utf8)
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, item) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(object[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let number as NSNumber: out += Array(number.stringValue.utf8)
        default: out += Array("null".utf8)
        }
    }

    static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// JSON text written as it is: a delivered message kept as the text it arrived as. Parsing it into objects
/// and writing them back would turn a 1 into `true`, as `NSNumber` bridges to `Bool` on Linux.
struct RawJSON {
    var text: String
}

/// RFC 3339 timestamps with milliseconds in UTC (`2026-01-15T01:30:15.010Z`), as the v1 API writes
/// `create_time`; built by hand because a date formatter per request dominated the emulator's profile.
enum Timestamp {
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: what four digits of year hold.
    static let earliest = -62_135_596_800.0
    static let latest = 253_402_300_799.999

    static func rfc3339(_ date: Date) -> String {
        // The nearest millisecond: a time read back from its own text (an import) lands a hair beside the
        // millisecond it was written as (up to 0.03 ms in year 9999, where a Double's steps are that wide), and
        // must print the same. Years 1 to 9999, all `parse` reads, stay far inside 64 bits.
        let interval = min(max(date.timeIntervalSince1970, Timestamp.earliest), Timestamp.latest)
        let total = Int64(exactly: (interval * 1000).rounded()) ?? 0
        let (quotient, remainder) = total.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(remainder < 0 ? quotient - 1 : quotient)
        let millis = Int(remainder < 0 ? remainder + 1000 : remainder)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    /// Reads what `rfc3339` writes, and RFC 3339 in general (any fraction, `Z` or an offset). By hand for the
    /// same reason: an import holds a creation time for each of up to millions of subscriptions.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 20, let year = number(0, 4), bytes[4] == 45, let month = number(5, 2), bytes[7] == 45, let day = number(8, 2),
            bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32, let hour = number(11, 2), bytes[13] == 58, let minute = number(14, 2),
            bytes[16] == 58, let second = number(17, 2)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 46 {
            var scale = 0.1
            index += 1
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        var offset = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case 90, 122: index += 1
        case 43, 45:
            guard let hours = number(index + 1, 2), index + 3 < bytes.count, bytes[index + 3] == 58, let minutes = number(index + 4, 2) else {
                return nil
            }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == 45 ? -1 : 1)
            index += 6
        default: return nil
        }
        guard index == bytes.count, year >= 1, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else {
            return nil
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: Double(timegm(&parts) - offset) + fraction)
    }
}
