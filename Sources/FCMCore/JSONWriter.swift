/// Appends JSON text to a byte buffer: state and journal writers build their output by hand, because a
/// generic encoder's per-value overhead is what a million-subscription state would pay.
package struct JSONWriter {
    package var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func int(_ value: Int) { bytes.append(contentsOf: String(value).utf8) }

    /// Control characters JSON lets through raw (C1, the line and paragraph separators, bidirectional
    /// overrides; see `PrintableText`) are written as `\uXXXX` too: a document printed to a log shows them.
    package mutating func string(_ text: String) {
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
