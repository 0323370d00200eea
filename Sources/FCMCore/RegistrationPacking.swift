import Foundation

/// Registrations kept at 6 bits a character. FCM tokens and FIDs are base64url text (64 characters) with, in a
/// token, one ':' after the installation's part (wire reference §0.4); at ten million 160-character tokens the
/// bytes are most of what a fleet holds, and a quarter of them is this saving.
///
/// The packed form is a head byte (the ':''s position + 1, or 0 for none) and the other characters' codes, 6 bits
/// each, most significant first, the last byte padded with zero bits. Codes follow the characters' ASCII order,
/// so two packed values whose ':' stands at the same place compare byte by byte as their text does (the ':' is
/// equal in both, and a shorter value's zero padding sorts it before a longer one it begins). Text with another
/// character, a second ':', a ':' past position 254, or too short to gain anything is kept as it is.
enum RegistrationPacking {
    /// Shorter than this, text is kept as it is.
    static let minimumCount = 8
    static let notCoded: UInt8 = 0xFF

    /// The code of each byte, `notCoded` for bytes outside the alphabet.
    nonisolated(unsafe) static let codes: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        table.initialize(repeating: notCoded, count: 256)
        for code in 0..<64 { table[Int(characters[code])] = UInt8(code) }
        return UnsafePointer(table)
    }()

    /// The characters by code, in ASCII order: '-', digits, upper case, '_', lower case.
    nonisolated(unsafe) static let characters: UnsafePointer<UInt8> = {
        let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
        precondition(alphabet.count == 64 && alphabet == alphabet.sorted())
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
        table.initialize(from: alphabet, count: 64)
        return UnsafePointer(table)
    }()

    /// Bytes the packed form of `count` characters takes, given its head byte.
    @inline(__always) static func packedCount(characters count: Int, head: UInt8) -> Int {
        1 + ((count - (head == 0 ? 0 : 1)) * 6 + 7) / 8
    }

    /// Packs `text` into `out` (room for `text.count` bytes is enough) and returns the bytes written, or nil if the
    /// text is kept as it is.
    static func pack(_ text: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) -> Int? {
        let count = text.count
        guard count >= minimumCount, let base = text.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let colon = memchr(base, Int32(UInt8(ascii: ":")), count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
        guard colon < 255 || colon == count else { return nil }
        // The characters but the ':', as one stream: position `i` of it is `i` or `i + 1` of the text.
        let coded = colon == count ? count : count - 1
        let codes = Self.codes
        @inline(__always) func code(_ index: Int) -> UInt32 { UInt32(codes[Int(base[index + (index >= colon ? 1 : 0)])]) }
        var written = 1
        var index = 0
        // Four characters to three bytes; a byte outside the alphabet (a second ':' too) has code 0xFF, whose
        // high bits the OR of the four shows.
        while index + 4 <= coded {
            let a = code(index)
            let b = code(index + 1)
            let c = code(index + 2)
            let d = code(index + 3)
            guard (a | b | c | d) & 0xC0 == 0 else { return nil }
            let bits = a << 18 | b << 12 | c << 6 | d
            out[written] = UInt8(truncatingIfNeeded: bits >> 16)
            out[written + 1] = UInt8(truncatingIfNeeded: bits >> 8)
            out[written + 2] = UInt8(truncatingIfNeeded: bits)
            written += 3
            index += 4
        }
        var bits: UInt32 = 0
        var pending = 0
        while index < coded {
            let value = code(index)
            guard value & 0xC0 == 0 else { return nil }
            bits = bits << 6 | value
            pending += 6
            index += 1
        }
        // 0 to 3 characters left: 0 to 18 bits, written high first and padded with zeros to a byte.
        if pending > 0 {
            let padded = bits << UInt32((8 - pending % 8) % 8)
            for byte in stride(from: (pending + 7) / 8 - 1, through: 0, by: -1) {
                out[written] = UInt8(truncatingIfNeeded: padded >> UInt32(byte * 8))
                written += 1
            }
        }
        out[0] = colon == count ? 0 : UInt8(colon + 1)
        return written
    }

    /// Writes the `count` characters packed at `packed` into `out`.
    static func unpack(_ packed: UnsafePointer<UInt8>, characters count: Int, into out: UnsafeMutablePointer<UInt8>) {
        let characters = Self.characters
        let colon = Int(packed[0]) - 1
        let coded = colon < 0 ? count : count - 1
        var read = 1
        var index = 0
        while index + 4 <= coded {
            let bits = UInt32(packed[read]) << 16 | UInt32(packed[read + 1]) << 8 | UInt32(packed[read + 2])
            out[index] = characters[Int(bits >> 18)]
            out[index + 1] = characters[Int((bits >> 12) & 0x3F)]
            out[index + 2] = characters[Int((bits >> 6) & 0x3F)]
            out[index + 3] = characters[Int(bits & 0x3F)]
            read += 3
            index += 4
        }
        var bits: UInt32 = 0
        var available = 0
        while index < coded {
            if available < 6 {
                bits = bits << 8 | UInt32(packed[read])
                read += 1
                available += 8
            }
            available -= 6
            out[index] = characters[Int((bits >> UInt32(available)) & 0x3F)]
            index += 1
        }
        // The stream had no ':'; it goes back where it stood.
        if colon >= 0 {
            memmove(out + colon + 1, out + colon, coded - colon)
            out[colon] = UInt8(ascii: ":")
        }
    }
}
