/// Appends JSON text to a byte buffer: state and journal writers build their output by hand, because a
/// generic encoder's per-value overhead is what a million-subscription state would pay.
package struct JSONWriter {
    package var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Digits written in place: a state or journal holds an integer per subscription, and a String for each
    /// was an allocation apiece.
    package mutating func int(_ value: Int) {
        if value < 0 {
            guard value != .min else {
                bytes.append(contentsOf: String(value).utf8)
                return
            }
            bytes.append(UInt8(ascii: "-"))
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, the most a UInt64 has
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index...]))
        }
    }

    /// A string from its UTF-8 bytes; text that needs no escape (a registration, nearly every topic) is
    /// copied whole rather than byte by byte.
    package mutating func string(utf8 text: UnsafeBufferPointer<UInt8>) {
        if Self.needsNoEscape(text) {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: text)
            bytes.append(UInt8(ascii: "\""))
        } else {
            string(String(decoding: text, as: UTF8.self))
        }
    }

    /// Printable ASCII other than the quote and the backslash.
    static func needsNoEscape(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in text where byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            return false
        }
        return true
    }

    /// Control characters JSON lets through raw (C1, the line and paragraph separators, bidirectional
    /// overrides; see `PrintableText`) are written as `\uXXXX` too: a document printed to a log shows them.
    package mutating func string(_ text: String) {
        if let copied = text.utf8.withContiguousStorageIfAvailable({ utf8 -> Bool in
            guard Self.needsNoEscape(utf8) else { return false }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return true
        }), copied {
            return
        }
        bytes.append(UInt8(ascii: "\""))
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0..<0x20, 0x7F: escape(UInt32(byte))
            case 0xC2:
                guard let next = utf8.next() else {
                    bytes.append(byte)
                    break
                }
                if (0x80...0x9F).contains(next) { escape(UInt32(next)) } else { bytes.append(contentsOf: [byte, next]) }
            case 0xE2:
                // U+2000–U+2FFF: the separators and bidirectional controls live there.
                guard let second = utf8.next() else {
                    bytes.append(byte)
                    break
                }
                guard let third = utf8.next() else {
                    bytes.append(contentsOf: [byte, second])
                    break
                }
                let value = 0x2000 | (UInt32(second & 0x3F) << 6) | UInt32(third & 0x3F)
                if let scalar = Unicode.Scalar(value), PrintableText.isControl(scalar) {
                    escape(value)
                } else {
                    bytes.append(contentsOf: [byte, second, third])
                }
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func escape(_ value: UInt32) {
        let digits = Self.digits
        raw("\\u")
        for shift in stride(from: 12, through: 0, by: -4) { bytes.append(digits[Int((value >> UInt32(shift)) & 0xF)]) }
    }
}
