import Foundation
import Synchronization

/// An app registration as FCM knows it: a legacy FCM token or a Firebase Installation ID (FID).
/// Two kinds exist because FCM is moving from tokens to FIDs (wire reference §0.4).
///
/// A registration is an interned handle: each distinct one is stored once per process (`RegistrationTable`)
/// and every set, plan, ledger and outcome holds a one-word reference to it. At a million subscriptions
/// that is what keeps memory flat (a token is about 150 bytes, and a fleet names each one in several structures)
/// and makes hashing and equality one word instead of the whole token.
package struct Registration: Hashable, Comparable, Sendable, CustomStringConvertible {
    package enum Kind: String, Sendable, Codable {
        case token
        case fid
    }

    /// The registration's place in `RegistrationTable.shared`.
    fileprivate let handle: UInt32

    package var value: String { RegistrationTable.shared.value(handle) }
    package var kind: Kind { RegistrationTable.shared.kind(handle) }
    /// The length of the text in UTF-8 bytes, known without reading it.
    package var utf8Count: Int { RegistrationTable.shared.utf8Count(handle) }

    /// Writes the text percent-encoded as a URL path segment at `out[index...]` (room for three bytes a character);
    /// returns the index after it.
    package func writeURLComponent(into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int {
        RegistrationTable.shared.writeURLComponent(handle, into: out, at: index)
    }

    package init(value: String, kind: Kind) {
        var value = value
        handle = value.withUTF8 { RegistrationTable.shared.intern(UnsafeRawBufferPointer($0), kind) }
    }

    /// A registration from bytes as read (UTF-8), with no String made for it.
    package init(utf8 bytes: UnsafeRawBufferPointer, kind: Kind) {
        handle = RegistrationTable.shared.intern(bytes, kind)
    }

    /// The registration with this one's text and `kind`, if the process has met it: none is made.
    package func asKind(_ kind: Kind) -> Registration? {
        if kind == self.kind { return self }
        // No registration of that kind exists: none with this text either, and its text need not be hashed.
        guard RegistrationTable.shared.hasMet(kind) else { return nil }
        return withUTF8 { RegistrationTable.shared.existing(UnsafeRawBufferPointer($0), kind) }.map(Registration.init(handle:))
    }

    /// The registration with this text and kind, if the process has met it: none is made.
    package init?(existing value: String, kind: Kind) {
        var value = value
        guard let handle = value.withUTF8({ RegistrationTable.shared.existing(UnsafeRawBufferPointer($0), kind) }) else { return nil }
        self.handle = handle
    }

    private init(handle: UInt32) { self.handle = handle }

    /// A number unique to the registration in this process, below `RegistrationTable.shared.count`: for tables
    /// indexed by registration, and for storing one in 4 bytes (`init(ordinal:)` gives it back).
    package var ordinal: UInt32 { handle }

    /// The registration `ordinal` named; it must be one a registration gave.
    package init(ordinal: UInt32) { handle = ordinal }

    /// Calls `body` with the registration's UTF-8 bytes, where they are kept: no String is made.
    package func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try RegistrationTable.shared.withText(handle, body)
    }

    /// Whether the text is 1 to `maximumLength` visible ASCII characters (no space, no control character): a
    /// registration no rule needs to look at closer. Packed text is, by what packing takes, so it is not unpacked.
    package var isVisibleASCII: Bool { RegistrationTable.shared.isVisibleASCII(handle) }

    package static func == (lhs: Registration, rhs: Registration) -> Bool { lhs.handle == rhs.handle }

    package func hash(into hasher: inout Hasher) { hasher.combine(handle) }

    /// What sets and dictionaries of registrations (the plan's, the ledger's, the state's) hash with: the handle
    /// mixed with the table's seed by a 64-bit finalizer (MurmurHash3's fmix64), not a SipHash run per lookup.
    /// Handles are numbers fcmctl hands out in order, not text an input chooses, so a fast mix loses nothing.
    package func _rawHashValue(seed: Int) -> Int {
        var mixed = UInt64(handle) ^ UInt64(bitPattern: Int64(seed))
        mixed ^= mixed >> 33
        mixed &*= 0xff51_afd7_ed55_8ccd
        mixed ^= mixed >> 33
        mixed &*= 0xc4ce_b9fe_1a85_ec53
        mixed ^= mixed >> 33
        return Int(bitPattern: UInt(mixed))
    }

    /// Infers the kind from the shape: FIDs are 22 base64url characters whose first is c, d, e or f
    /// (firebase-js-sdk `VALID_FID_PATTERN`, wire reference §7); anything else is treated as a token.
    package init(inferring value: String) {
        self.init(value: value, kind: Registration.looksLikeFID(value) ? .fid : .token)
    }

    package static func looksLikeFID(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 22, let first = bytes.first, (UInt8(ascii: "c")...UInt8(ascii: "f")).contains(first)
        else { return false }
        return bytes.allSatisfy(isBase64URL)
    }

    package static let maximumLength = 4096

    /// Whether a run of text quoted in output (a source line, a URL's path segment) is a registration to redact:
    /// an FCM token (30+ characters with a ':'), a FID, or any 64+ character run.
    package static func looksLikeRegistrationInText(_ text: String) -> Bool {
        (text.count >= 30 && text.contains(":")) || text.count >= 64 || looksLikeFID(text)
    }

    /// By value, byte by byte (for the ASCII registrations are, as String orders them), then token before FID.
    package static func < (lhs: Registration, rhs: Registration) -> Bool {
        lhs.handle != rhs.handle && RegistrationTable.shared.precedes(lhs.handle, rhs.handle)
    }

    package var description: String { value }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}

extension Sequence where Element == Registration {
    /// The registrations in text order, as `sorted()` by `<` gives them: by a key of each one's first 8 bytes
    /// first, so most comparisons are of two integers and not of two texts (a plan of 20,000 additions sorted
    /// them through `<` in 2 % of its time). Chosen over the standard `sorted()` wherever the elements are known
    /// to be registrations.
    package func sorted() -> [Registration] {
        let table = RegistrationTable.shared
        var keyed = map { (key: table.orderKey($0.handle), registration: $0) }
        keyed.sort { $0.key != $1.key ? $0.key < $1.key : $0.registration < $1.registration }
        return keyed.map(\.registration)
    }
}

/// Registrations are credentials of a sort (anyone holding one can message that device), so output hides
/// most of each one unless the user asks with `--show-tokens`.
package struct Redactor: Sendable {
    package let showTokens: Bool

    package init(showTokens: Bool) { self.showTokens = showTokens }

    package func callAsFunction(_ registration: Registration) -> String { redact(registration.value) }

    package func redact(_ value: String) -> String {
        if showTokens { return value }
        // Registrations are ASCII, where a byte is a character (but for CR LF): sliced as bytes, not graphemes,
        // since finding grapheme boundaries costs far more per character and a plan redacts every member it prints.
        let bytes = value.utf8
        if bytes.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) {
            if bytes.count <= 12 { return String(decoding: bytes.prefix(4), as: UTF8.self) + "…" }
            return String(decoding: bytes.prefix(6), as: UTF8.self) + "…" + String(decoding: bytes.suffix(4), as: UTF8.self)
        }
        let characters = Array(value)
        if characters.count <= 12 { return String(characters.prefix(4)) + "…" }
        return String(characters.prefix(6)) + "…" + String(characters.suffix(4))
    }
}

/// The process's registrations, each stored once: the bytes in an append-only arena (packed at 6 bits a
/// character where the text allows, `RegistrationPacking`), an 8-byte record each saying where, and an
/// open-addressing index of 4-byte slots for interning. A `Registration` is a 4-byte index
/// into the records. Chunks are never moved or freed (a handle stays valid for the process's life: a command
/// reads a fleet once), so reading a registration takes no lock: a handle reaches another thread only through
/// something that orders memory (a lock, a task, a queue), after its record was written.
package final class RegistrationTable: @unchecked Sendable {
    /// A record in one word: the arena chunk (16 bits), the offset in it (20), whether a FID (1), whether its
    /// bytes are packed (1), the text's length (26).
    struct Record {
        let word: UInt64

        init(chunk: Int, offset: Int, kind: Registration.Kind, packed: Bool, count: Int) {
            word = UInt64(chunk) << 48 | UInt64(offset) << 28 | (kind == .fid ? 1 << 27 : 0) | (packed ? 1 << 26 : 0) | UInt64(count)
        }

        var chunk: Int { Int(word >> 48) }
        var offset: Int { Int((word >> 28) & 0xF_FFFF) }
        var kind: Registration.Kind { word & (1 << 27) != 0 ? .fid : .token }
        var packed: Bool { word & (1 << 26) != 0 }
        var count: Int { Int(word & 0x3FF_FFFF) }
    }

    /// Text as the table keeps it: packed, or as it is.
    struct Stored {
        let bytes: UnsafeRawBufferPointer
        let packed: Bool
    }

    static let recordsPerChunkShift = 16
    static let recordsPerChunk = 1 << recordsPerChunkShift
    /// Chunks of records the directory can hold: UInt32's range of handles.
    static let recordChunkSlots = 1 << (32 - recordsPerChunkShift)
    static let arenaChunkBytes = 1 << 20
    /// Arena chunks a record can name (16 bits): 64 GiB of registrations.
    static let arenaChunkSlots = 1 << 16
    /// Longer than this, a value gets an arena chunk of its own.
    static let sharedChunkLimit = arenaChunkBytes / 16

    package static let shared = RegistrationTable()

    /// Record chunks by `handle >> recordsPerChunkShift`, and arena chunks by number: written under the lock,
    /// read without it.
    private let records: UnsafeMutablePointer<UnsafeMutablePointer<Record>?>
    private let arena: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    private let interning = Mutex(Interning())
    /// The kinds interned so far (1: a token, 2: a FID): a fleet of tokens alone has no FID to look up.
    private let kindsMet = Atomic<UInt8>(0)

    /// Whether a registration of `kind` was ever interned in this process.
    func hasMet(_ kind: Registration.Kind) -> Bool { kindsMet.load(ordering: .relaxed) & (kind == .fid ? 2 : 1) != 0 }

    /// What only the lock's holder touches.
    struct Interning: @unchecked Sendable {
        var count = 0
        /// handle + 1, 0 for empty.
        var slots: UnsafeMutablePointer<UInt32>
        var mask = 1023
        var arenaChunks = 0
        /// Free bytes at the end of the last shared arena chunk, and where they start.
        var chunk = -1
        var used = 0

        init() {
            slots = .allocate(capacity: 1024)
            slots.initialize(repeating: 0, count: 1024)
        }
    }

    init() {
        records = .allocate(capacity: Self.recordChunkSlots)
        records.initialize(repeating: nil, count: Self.recordChunkSlots)
        arena = .allocate(capacity: Self.arenaChunkSlots)
        arena.initialize(repeating: nil, count: Self.arenaChunkSlots)
    }

    @inline(__always) func record(_ handle: UInt32) -> Record {
        records[Int(handle >> UInt32(Self.recordsPerChunkShift))]![Int(handle & UInt32(Self.recordsPerChunk - 1))]
    }

    /// The record's bytes in the arena, as kept.
    @inline(__always) func stored(_ record: Record) -> UnsafeBufferPointer<UInt8> {
        let start = arena[record.chunk]! + record.offset
        let count = record.packed ? RegistrationPacking.packedCount(characters: record.count, head: start[0]) : record.count
        return UnsafeBufferPointer(start: start, count: count)
    }

    /// Calls `body` with the registration's text: where it is kept, or unpacked on the stack.
    func withText<Result>(_ handle: UInt32, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        let found = record(handle)
        let bytes = stored(found)
        guard found.packed else { return try body(bytes) }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: found.count) { text in
            RegistrationPacking.unpack(bytes.baseAddress!, characters: found.count, into: text.baseAddress!)
            return try body(UnsafeBufferPointer(text))
        }
    }

    /// Packed text is the base64url alphabet, which needs no escaping, and one ':' at most: it is unpacked straight
    /// into the URL, without a copy of the text to escape byte by byte (every request's URL holds one).
    func writeURLComponent(_ handle: UInt32, into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int {
        let found = record(handle)
        let bytes = stored(found)
        guard found.packed else { return URLComponentEncoder.encode(bytes, into: out, at: index) }
        let start = out.baseAddress! + index
        RegistrationPacking.unpack(bytes.baseAddress!, characters: found.count, into: start)
        let colon = Int(bytes[0]) - 1
        guard colon >= 0 else { return index + found.count }
        memmove(start + colon + 3, start + colon + 1, found.count - colon - 1)
        start[colon] = UInt8(ascii: "%")
        start[colon + 1] = UInt8(ascii: "3")
        start[colon + 2] = UInt8(ascii: "A")
        return index + found.count + 2
    }

    /// The text's first 8 bytes, big-endian (zeros past its end): a key whose order agrees with the text's,
    /// so a sort compares keys and reads the texts only where keys tie. Packed text is unpacked for these 8 only.
    func orderKey(_ handle: UInt32) -> UInt64 {
        let found = record(handle)
        let bytes = stored(found)
        let prefix = min(8, found.count)
        var key: UInt64 = 0
        guard found.packed else {
            for index in 0..<prefix { key |= UInt64(bytes[index]) << UInt64(56 - 8 * index) }
            return key
        }
        let colon = Int(bytes[0]) - 1
        for index in 0..<prefix {
            var byte = UInt8(ascii: ":")
            if index != colon {
                // The coded characters are one big-endian stream of 6-bit codes after the head byte.
                let bit = 6 * (colon >= 0 && index > colon ? index - 1 : index)
                let at = 1 + bit >> 3
                let pair = UInt32(bytes[at]) << 8 | (at + 1 < bytes.count ? UInt32(bytes[at + 1]) : 0)
                byte = RegistrationPacking.characters[Int((pair >> UInt32(10 - bit & 7)) & 0x3F)]
            }
            key |= UInt64(byte) << UInt64(56 - 8 * index)
        }
        return key
    }

    func value(_ handle: UInt32) -> String {
        let found = record(handle)
        let bytes = stored(found)
        guard found.packed else { return String(decoding: bytes, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: found.count) { text in
            RegistrationPacking.unpack(bytes.baseAddress!, characters: found.count, into: text.baseAddress!)
            return found.count
        }
    }

    func kind(_ handle: UInt32) -> Registration.Kind { record(handle).kind }

    func utf8Count(_ handle: UInt32) -> Int { record(handle).count }

    func isVisibleASCII(_ handle: UInt32) -> Bool {
        let found = record(handle)
        guard (1...Registration.maximumLength).contains(found.count) else { return false }
        return found.packed || stored(found).allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    func precedes(_ lhs: UInt32, _ rhs: UInt32) -> Bool {
        let a = record(lhs)
        let b = record(rhs)
        let order: Int32
        let storedA = stored(a)
        let storedB = stored(b)
        if a.packed, b.packed, storedA[0] == storedB[0] {
            // The ':' at the same place in both (or in neither): the codes compare as the text does.
            let common = min(storedA.count, storedB.count) - 1
            order = common <= 0 ? 0 : memcmp(storedA.baseAddress! + 1, storedB.baseAddress! + 1, common)
        } else if !a.packed, !b.packed {
            let common = min(a.count, b.count)
            order = common == 0 ? 0 : memcmp(storedA.baseAddress!, storedB.baseAddress!, common)
        } else {
            order = withText(lhs) { left in
                withText(rhs) { right in
                    let common = min(left.count, right.count)
                    return common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                }
            }
        }
        if order != 0 { return order < 0 }
        if a.count != b.count { return a.count < b.count }
        return a.kind == .token && b.kind == .fid
    }

    /// A seed per process, so no input can be made to collide on purpose in every run.
    static let seed = UInt64.random(in: .min ... .max)

    /// The index's hash of a stored form: eight bytes at a time, finished with splitmix64. `Hasher` took a tenth
    /// of a pull request's plan, most of it seeding a new hasher for every registration read.
    static func hash(_ stored: UnsafeRawBufferPointer, _ kind: Registration.Kind) -> Int {
        let start = seed ^ UInt64(stored.count) &* 0x9E37_79B9_7F4A_7C15 ^ (kind == .token ? 0 : 0xD6E8_FEB8_6659_FD93)
        return Int(truncatingIfNeeded: AppliedDeclarations.mix(ByteHash.words(stored, start: start)))
    }

    /// Calls `body` with `text` as the table would keep it, packed on the stack where it packs.
    private func withStoredForm<Result>(_ text: UnsafeRawBufferPointer, _ body: (Stored) -> Result) -> Result {
        guard text.count >= RegistrationPacking.minimumCount else { return body(Stored(bytes: text, packed: false)) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: text.count) { buffer in
            guard let count = RegistrationPacking.pack(text, into: buffer.baseAddress!) else {
                return body(Stored(bytes: text, packed: false))
            }
            return body(Stored(bytes: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: count), packed: true))
        }
    }

    /// The handle of text of `count` bytes as `kind`, kept as `form`, or the empty slot where it would go.
    private func find(_ form: Stored, count: Int, _ kind: Registration.Kind, hash: Int, in state: Interning) -> (UInt32?, Int) {
        var position = hash & state.mask
        while true {
            let slot = state.slots[position]
            if slot == 0 { return (nil, position) }
            let handle = slot - 1
            let found = record(handle)
            // The head byte is compared first: it says how many bytes the stored form has.
            if found.kind == kind, found.count == count, found.packed == form.packed,
                form.bytes.isEmpty
                    || (arena[found.chunk]![found.offset] == form.bytes[0]
                        && memcmp(arena[found.chunk]! + found.offset, form.bytes.baseAddress!, form.bytes.count) == 0)
            {
                return (handle, position)
            }
            position = (position + 1) & state.mask
        }
    }

    func existing(_ bytes: UnsafeRawBufferPointer, _ kind: Registration.Kind) -> UInt32? {
        withStoredForm(bytes) { form in
            let hash = Self.hash(form.bytes, kind)
            return interning.withLock { state in find(form, count: bytes.count, kind, hash: hash, in: state).0 }
        }
    }

    func intern(_ bytes: UnsafeRawBufferPointer, _ kind: Registration.Kind) -> UInt32 {
        withStoredForm(bytes) { form in intern(form, count: bytes.count, kind) }
    }

    private func intern(_ form: Stored, count: Int, _ kind: Registration.Kind) -> UInt32 {
        let hash = Self.hash(form.bytes, kind)
        return interning.withLock { state in
            let (found, position) = find(form, count: count, kind, hash: hash, in: state)
            if let found { return found }
            precondition(state.count < Int(UInt32.max) - 1, "more registrations than a handle can name")
            precondition(count <= 0x3FF_FFFF, "a registration of \(count) bytes")
            let handle = UInt32(state.count)
            let (chunk, offset) = store(form.bytes, &state)
            let recordChunk = Int(handle >> UInt32(Self.recordsPerChunkShift))
            if records[recordChunk] == nil { records[recordChunk] = .allocate(capacity: Self.recordsPerChunk) }
            (records[recordChunk]! + Int(handle & UInt32(Self.recordsPerChunk - 1))).initialize(
                to: Record(chunk: chunk, offset: offset, kind: kind, packed: form.packed, count: count))
            state.slots[position] = handle + 1
            state.count += 1
            kindsMet.bitwiseOr(kind == .fid ? 2 : 1, ordering: .relaxed)
            if state.count * 10 > (state.mask + 1) * 7 { grow(&state) }
            return handle
        }
    }

    /// Copies the bytes into the arena: (chunk, offset). A long value gets a chunk of its own.
    private func store(_ bytes: UnsafeRawBufferPointer, _ state: inout Interning) -> (Int, Int) {
        func newChunk(_ capacity: Int) -> Int {
            precondition(state.arenaChunks < Self.arenaChunkSlots, "more registration bytes than the arena can name")
            arena[state.arenaChunks] = .allocate(capacity: capacity)
            state.arenaChunks += 1
            return state.arenaChunks - 1
        }
        let source = bytes.bindMemory(to: UInt8.self)
        if bytes.count > Self.sharedChunkLimit {
            let chunk = newChunk(bytes.count)
            arena[chunk]!.initialize(from: source.baseAddress!, count: bytes.count)
            return (chunk, 0)
        }
        if state.chunk < 0 || Self.arenaChunkBytes - state.used < bytes.count {
            state.chunk = newChunk(Self.arenaChunkBytes)
            state.used = 0
        }
        let offset = state.used
        if !bytes.isEmpty { (arena[state.chunk]! + offset).initialize(from: source.baseAddress!, count: bytes.count) }
        state.used += bytes.count
        return (state.chunk, offset)
    }

    /// Room in the index for `total` registrations, made at once: growing by doubling hashes every value again
    /// at each step (8 % of a ten-million-device load).
    package func reserve(_ total: Int) {
        interning.withLock { state in
            var capacity = state.mask + 1
            while total * 10 > capacity * 7 { capacity *= 2 }
            if capacity > state.mask + 1 { grow(&state, to: capacity) }
        }
    }

    /// Doubles the index; each value is hashed again from its bytes (slots keep no hash, to stay 4 bytes).
    private func grow(_ state: inout Interning) { grow(&state, to: (state.mask + 1) * 2) }

    private func grow(_ state: inout Interning, to capacity: Int) {
        let slots = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
        slots.initialize(repeating: 0, count: capacity)
        let mask = capacity - 1
        for old in 0...state.mask {
            let slot = state.slots[old]
            if slot == 0 { continue }
            let found = record(slot - 1)
            var position = Self.hash(UnsafeRawBufferPointer(stored(found)), found.kind) & mask
            while slots[position] != 0 { position = (position + 1) & mask }
            slots[position] = slot
        }
        state.slots.deallocate()
        state.slots = slots
        state.mask = mask
    }

    /// How many distinct registrations this process has seen: every handle is below it.
    package var count: Int { interning.withLock { $0.count } }
}
