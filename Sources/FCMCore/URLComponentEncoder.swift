package enum URLComponentEncoder {
    /// Percent-encodes everything but RFC 3986 unreserved characters: registrations carry ':' and topic
    /// names may carry '%', both of which must reach the server as data, not syntax.
    package static func encode(_ text: String) -> String {
        // Runs for every request (a registration in most URLs): bytes in, bytes out, one allocation.
        var bytes = text
        let encoded: String? = bytes.withUTF8 { source in
            var escaped = 0
            for byte in source where !isUnreserved(byte) { escaped += 1 }
            if escaped == 0 { return nil }
            return String(unsafeUninitializedCapacity: source.count + 2 * escaped) { encode(source, into: $0, at: 0) }
        }
        return encoded ?? text
    }

    @inline(__always) static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    @inline(__always) static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    /// Writes `bytes` encoded at `out[index...]` (room for three bytes each); returns the index after.
    package static func encode(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int {
        var index = index
        for byte in bytes {
            if isUnreserved(byte) {
                out[index] = byte
                index += 1
            } else {
                out[index] = UInt8(ascii: "%")
                out[index + 1] = hexDigit(byte >> 4)
                out[index + 2] = hexDigit(byte & 0x0F)
                index += 3
            }
        }
        return index
    }
}
