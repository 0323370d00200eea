/// A hash of bytes eight at a time (multiply and xor-shift per word), for the in-memory indexes that hash every
/// registration or device name once per lookup: a fresh `Hasher` per value was a tenth of a fleet's load. Not
/// stable across runs when seeded per process; not for anything written down.
package enum ByteHash {
    /// `start` carries the seed and whatever else the caller mixes in first (the length, a kind).
    package static func words(_ bytes: UnsafeRawBufferPointer, start: UInt64) -> UInt64 {
        var hash = start
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x9FB2_1C65_1E98_DF25
            hash ^= hash >> 32
            offset += 8
        }
        if offset < bytes.count {
            var last: UInt64 = 0
            for index in offset..<bytes.count { last = last << 8 | UInt64(bytes[index]) }
            hash = (hash ^ last) &* 0x9FB2_1C65_1E98_DF25
            hash ^= hash >> 32
        }
        return hash
    }
}
