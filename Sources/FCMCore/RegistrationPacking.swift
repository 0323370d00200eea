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
        guard text.count >= minimumCount else { return nil }
        let codes = Self.codes
        var head: UInt8 = 0
        var written = 1
        var bits: UInt32 = 0
        var pending = 0
        for index in 0..<text.count {
            let byte = text[index]
            let code = codes[Int(byte)]
            if code == notCoded {
                guard byte == UInt8(ascii: ":"), head == 0, index < 255 else { return nil }
                head = UInt8(index + 1)
                continue
            }
            bits = bits << 6 | UInt32(code)
            pending += 6
            if pending >= 8 {
                pending -= 8
                out[written] = UInt8(truncatingIfNeeded: bits >> UInt32(pending))
                written += 1
            }
        }
        if pending > 0 {
            out[written] = UInt8(truncatingIfNeeded: bits << UInt32(8 - pending))
            written += 1
        }
        out[0] = head
        return written
    }

    /// Writes the `count` characters packed at `packed` into `out`.
    static func unpack(_ packed: UnsafePointer<UInt8>, characters count: Int, into out: UnsafeMutablePointer<UInt8>) {
        let characters = Self.characters
        let colon = Int(packed[0]) - 1
        var read = 1
        var bits: UInt32 = 0
        var available = 0
        for index in 0..<count {
            if index == colon {
                out[index] = UInt8(ascii: ":")
                continue
            }
            if available < 6 {
                bits = bits << 8 | UInt32(packed[read])
                read += 1
                available += 8
            }
            available -= 6
            out[index] = characters[Int((bits >> UInt32(available)) & 0x3F)]
        }
    }
}
