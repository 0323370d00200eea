import FCMCore
import Foundation

/// The manifest's devices, as columns: a device is a place in the table, its name bytes in one buffer, its
/// registration a handle, its labels an index into the distinct label sets (an export repeats a few hundred
/// combinations over millions of devices), its location a file index and a line. At a million devices this is
/// about 40 bytes a device beside the registration's own bytes, where a `ManifestDevice` each in a dictionary
/// was several hundred. `ManifestDevice` values are made on demand, one at a time.
///
/// Once sorted (`sortedByName()`, which the loader does after merging), a device's place is its position in
/// name order, which `Resolution` and the rules count by.
package struct DeviceTable: Sendable {
    private var nameBytes: [UInt8] = []
    /// Where each name ends in `nameBytes`; it starts where the one before ends.
    private var nameEnds: [UInt32] = []
    /// `Registration.ordinal`, or `none`.
    private var registrations: [UInt32] = []
    private var labelSetColumn: [UInt32] = []
    private var fileColumn: [UInt32] = []
    private var lines: [UInt32] = []
    /// Each device's column, once one is not 1 (a device file's devices start their line; YAML's are indented):
    /// empty while every column is 1, so a fleet of device files pays nothing for it.
    private var columns: [UInt32] = []
    /// Where a registration is written when not where its device is but in its file (YAML's `token:` under the
    /// name): a line and a column a device once any has one, line 0 where it is where the device is. Four bytes
    /// each a device where a dictionary entry holding a location was several tens, and copied as columns.
    private var registrationLines: [UInt32] = []
    private var registrationColumns: [UInt32] = []
    /// Where a registration is written in another file than its device (a manifest makes none).
    private var registrationsElsewhere: [Int: SourceLocation] = [:]
    /// The distinct label sets, the empty one first.
    package private(set) var labelSets: [[String: String]] = [[:]]
    /// Each label set's `LabelSetKey`, nil where it has text outside ASCII (and for the empty set).
    private var labelSetKeys: [LabelSetKey?] = [nil]
    /// Label sets of ASCII text by their bytes: one hash of a few bytes a device, where hashing and comparing
    /// a dictionary of Strings was several.
    private var asciiLabelSets: [LabelSetKey: UInt32] = [:]
    /// Every label set by String equality (canonical equivalence: "\u{212A}" is "K"), made when first needed and
    /// kept from then on: when a set with text outside ASCII arrives (only such a set can equal another whose bytes
    /// differ), or a device file's labels, which arrive as dictionaries.
    private var canonicalLabelSets: [[String: String]: UInt32]?
    private var files: [String] = []
    private var fileIndex: [String: UInt32] = [:]
    /// Open addressing over the names: position + 1, 0 for empty.
    private var slots: [UInt32] = []
    private(set) var isSortedByName = true

    package init() {}

    package var count: Int { nameEnds.count }
    package var isEmpty: Bool { nameEnds.isEmpty }

    // MARK: reading

    private static let none = UInt32.max

    private func nameRange(_ position: Int) -> Range<Int> { (position == 0 ? 0 : Int(nameEnds[position - 1]))..<Int(nameEnds[position]) }

    package func name(at position: Int) -> String { String(decoding: nameBytes[nameRange(position)], as: UTF8.self) }

    package func registration(at position: Int) -> Registration? {
        let ordinal = registrations[position]
        return ordinal == Self.none ? nil : Registration(ordinal: ordinal)
    }

    /// The index into `labelSets` of the device's labels.
    package func labelSet(at position: Int) -> Int { Int(labelSetColumn[position]) }

    package func labels(at position: Int) -> [String: String] { labelSets[Int(labelSetColumn[position])] }

    package func location(at position: Int) -> SourceLocation {
        SourceLocation(file: files[Int(fileColumn[position])], line: Int(lines[position]), column: Int(column(at: position)))
    }

    package func registrationLocation(at position: Int) -> SourceLocation {
        if !registrationsElsewhere.isEmpty, let elsewhere = registrationsElsewhere[position] { return elsewhere }
        guard let (line, column) = registrationPlace(at: position) else { return location(at: position) }
        return SourceLocation(file: files[Int(fileColumn[position])], line: Int(line), column: Int(column))
    }

    private func column(at position: Int) -> UInt32 { columns.isEmpty ? 1 : columns[position] }

    /// The line and column of the registration when in the device's file and not where the device is.
    private func registrationPlace(at position: Int) -> (UInt32, UInt32)? {
        guard !registrationLines.isEmpty, registrationLines[position] != 0 else { return nil }
        return (registrationLines[position], registrationColumns[position])
    }

    package func position(of name: String) -> Int? {
        var name = name
        return name.withUTF8 { find(UnsafeRawBufferPointer($0)).found }
    }

    package func contains(_ name: String) -> Bool { position(of: name) != nil }

    package func device(at position: Int) -> ManifestDevice {
        let registration = registration(at: position)
        return ManifestDevice(
            name: name(at: position), registration: registration.map { Located($0.value, at: registrationLocation(at: position)) },
            kind: registration?.kind ?? .token, labels: labels(at: position), location: location(at: position))
    }

    package subscript(name: String) -> ManifestDevice? { position(of: name).map(device(at:)) }

    /// Every device, made one at a time, in the table's order (name order once sorted).
    package var values: LazyMapSequence<Range<Int>, ManifestDevice> { (0..<count).lazy.map(device(at:)) }

    package var names: LazyMapSequence<Range<Int>, String> { (0..<count).lazy.map(name(at:)) }

    /// How many devices each file declares, by path.
    package func countsByFile() -> [String: Int] {
        var counts = [Int](repeating: 0, count: files.count)
        for file in fileColumn { counts[Int(file)] += 1 }
        return Dictionary(uniqueKeysWithValues: zip(files, counts).filter { $0.1 > 0 })
    }

    /// Whether the device's name holds a byte outside printable ASCII (so the rules that look for control
    /// characters need look only at those).
    package func nameIsPlainASCII(at position: Int) -> Bool { nameBytes[nameRange(position)].allSatisfy { $0 >= 0x20 && $0 < 0x7F } }

    // MARK: building

    /// Adds a device unless its name is taken; returns the position of the one holding it if it is.
    mutating func append(name: String, registration: Registration?, labels: [String: String], file: String, line: Int, column: Int) -> Int? {
        append(name: name, registration: registration, file: file, line: line, column: column) { $0.labelSetNumber(labels) }
    }

    /// Adds a device unless its name is taken; returns the position of the one holding it if it is. `labels` as
    /// written: a key given twice keeps its last value, as a dictionary built from them would.
    mutating func append(
        name: String, registration: Registration?, labels: [(key: String, value: String)], file: String, line: Int, column: Int
    ) -> Int? {
        append(name: name, registration: registration, file: file, line: line, column: column) { $0.labelSetNumber(labels) }
    }

    /// `labelSet` is asked only when the name is not taken.
    private mutating func append(
        name: String, registration: Registration?, file: String, line: Int, column: Int, labelSet: (inout DeviceTable) -> UInt32
    ) -> Int? {
        var name = name
        let taken = name.withUTF8 { appendName(UnsafeRawBufferPointer($0)) }
        if let taken { return taken }
        appendColumns(
            registration: registration?.ordinal ?? Self.none, labelSet: labelSet(&self), file: fileNumber(file), line: UInt32(clamping: line),
            column: UInt32(clamping: column))
        return nil
    }

    /// Adds the name unless it is taken (then returns the position holding it); the columns must follow.
    private mutating func appendName(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let (found, _) = find(bytes)
        if found != nil { return found }
        if let last = nameEnds.indices.last, isSortedByName, Self.precedes(bytes.assumingMemoryBound(to: UInt8.self), nameBytes[nameRange(last)]) {
            isSortedByName = false
        }
        nameBytes.append(contentsOf: bytes)
        return nil
    }

    private mutating func appendColumns(registration: UInt32, labelSet: UInt32, file: UInt32, line: UInt32, column: UInt32) {
        precondition(nameBytes.count < Int(UInt32.max), "more than 4 GiB of device names")
        nameEnds.append(UInt32(nameBytes.count))
        registrations.append(registration)
        labelSetColumn.append(labelSet)
        fileColumn.append(file)
        lines.append(line)
        if column != 1 || !columns.isEmpty {
            if columns.isEmpty { columns = [UInt32](repeating: 1, count: count - 1) }
            columns.append(column)
        }
        if !registrationLines.isEmpty {
            registrationLines.append(0)
            registrationColumns.append(0)
        }
        insertIntoIndex(count - 1)
    }

    private mutating func setRegistrationPlace(line: UInt32, column: UInt32, at position: Int) {
        if registrationLines.isEmpty {
            registrationLines = [UInt32](repeating: 0, count: count)
            registrationColumns = registrationLines
        }
        registrationLines[position] = line
        registrationColumns[position] = column
    }

    /// Records where a device's registration is written, when not where the device is.
    mutating func setRegistrationLocation(_ location: SourceLocation, at position: Int) {
        guard location != self.location(at: position) else { return }
        if location.file == files[Int(fileColumn[position])], location.line > 0, location.line <= Int(UInt32.max) {
            setRegistrationPlace(line: UInt32(location.line), column: UInt32(clamping: location.column), at: position)
        } else {
            registrationsElsewhere[position] = location
        }
    }

    /// Appends `other`'s devices; returns, for each whose name was taken, (the position here, the position in other).
    /// Label sets and files are matched once each, not once a device; the other columns are copied as they are.
    mutating func merge(_ other: DeviceTable) -> [(Int, Int)] {
        if isEmpty {
            self = other
            return []
        }
        let labelSetMap = other.labelSets.indices.map { index in
            index == 0 ? 0 : labelSetNumber(other.labelSets[index], key: other.labelSetKeys[index])
        }
        let fileMap = other.files.map { fileNumber($0) }
        reserveCapacity(count + other.count, nameBytes: nameBytes.count + other.nameBytes.count)
        var duplicates: [(Int, Int)] = []
        other.nameBytes.withUnsafeBytes { names in
            for position in 0..<other.count {
                if let taken = appendName(UnsafeRawBufferPointer(rebasing: names[other.nameRange(position)])) {
                    duplicates.append((taken, position))
                    continue
                }
                appendColumns(
                    registration: other.registrations[position], labelSet: labelSetMap[Int(other.labelSetColumn[position])],
                    file: fileMap[Int(other.fileColumn[position])], line: other.lines[position], column: other.column(at: position))
                if let (line, column) = other.registrationPlace(at: position) { setRegistrationPlace(line: line, column: column, at: count - 1) }
                if !other.registrationsElsewhere.isEmpty, let written = other.registrationsElsewhere[position] {
                    registrationsElsewhere[count - 1] = written
                }
            }
        }
        return duplicates
    }

    private mutating func labelSetNumber(_ labels: [(key: String, value: String)]) -> UInt32 {
        if labels.isEmpty { return 0 }
        let key = LabelSetKey(labels)
        if let key, let number = asciiLabelSets[key] { return number }
        return labelSetNumber(Dictionary(labels, uniquingKeysWith: { _, last in last }), key: key)
    }

    /// A device file's labels arrive as a dictionary: looked up as one, which costs less than making their bytes.
    private mutating func labelSetNumber(_ labels: [String: String]) -> UInt32 {
        if labels.isEmpty { return 0 }
        makeCanonicalLabelSets()
        if let number = canonicalLabelSets?[labels] { return number }
        return labelSetNumber(labels, key: LabelSetKey(labels.map { ($0.key, $0.value) }))
    }

    private mutating func makeCanonicalLabelSets() {
        if canonicalLabelSets != nil { return }
        canonicalLabelSets = Dictionary(zip(labelSets, labelSets.indices.lazy.map(UInt32.init)), uniquingKeysWith: { first, _ in first })
    }

    /// The number of `labels`, whose `LabelSetKey` is `key` (nil when it has none).
    private mutating func labelSetNumber(_ labels: [String: String], key: LabelSetKey?) -> UInt32 {
        if let key, let number = asciiLabelSets[key] { return number }
        if key == nil { makeCanonicalLabelSets() }
        let number: UInt32
        if let found = canonicalLabelSets?[labels] {
            number = found
        } else {
            number = UInt32(labelSets.count)
            labelSets.append(labels)
            labelSetKeys.append(key)
            canonicalLabelSets?[labels] = number
        }
        if let key { asciiLabelSets[key] = number }
        return number
    }

    /// Room for `devices` in every column and in the name index, so a merge grows each once.
    private mutating func reserveCapacity(_ devices: Int, nameBytes byteCount: Int) {
        Self.reserve(&nameBytes, byteCount)
        Self.reserve(&nameEnds, devices)
        Self.reserve(&registrations, devices)
        Self.reserve(&labelSetColumn, devices)
        Self.reserve(&fileColumn, devices)
        Self.reserve(&lines, devices)
        if !columns.isEmpty { Self.reserve(&columns, devices) }
        if !registrationLines.isEmpty {
            Self.reserve(&registrationLines, devices)
            Self.reserve(&registrationColumns, devices)
        }
        var capacity = 16
        while capacity * 3 < devices * 4 { capacity *= 2 }
        if capacity > slots.count { rebuildIndex(capacity: capacity) }
    }

    /// Room for about `more` devices besides these, each column sized once (a big file's count, estimated from its
    /// size and its first lines): grown by doubling, ten million devices' columns held up to twice their bytes.
    mutating func expect(more: Int) {
        let devices = count + more
        let averageName = count == 0 ? 16 : (nameBytes.count + count - 1) / count
        func size(_ column: inout [UInt32]) { if column.capacity < devices { column.reserveCapacity(devices) } }
        size(&nameEnds)
        size(&registrations)
        size(&labelSetColumn)
        size(&fileColumn)
        size(&lines)
        if nameBytes.capacity < devices * averageName { nameBytes.reserveCapacity(devices * averageName) }
        var capacity = 16
        while capacity * 3 < devices * 4 { capacity *= 2 }
        if capacity > slots.count { rebuildIndex(capacity: capacity) }
    }

    /// At least doubling, so merging many small tables copies each column a logarithmic number of times.
    private static func reserve<Element>(_ array: inout [Element], _ wanted: Int) {
        if wanted > array.capacity { array.reserveCapacity(max(wanted, array.capacity * 2)) }
    }

    private mutating func fileNumber(_ file: String) -> UInt32 {
        if let number = fileIndex[file] { return number }
        let number = UInt32(files.count)
        files.append(file)
        fileIndex[file] = number
        return number
    }

    /// The devices in name order (String's order; byte order where both names are ASCII, which is the same).
    package func sortedByName() -> DeviceTable {
        if isSortedByName { return self }
        let order = nameBytes.withUnsafeBufferPointer { all in
            (0..<count).sorted { a, b in
                Self.precedes(UnsafeBufferPointer(rebasing: all[nameRange(a)]), UnsafeBufferPointer(rebasing: all[nameRange(b)]))
            }
        }
        var sorted = DeviceTable()
        sorted.labelSets = labelSets
        sorted.labelSetKeys = labelSetKeys
        sorted.asciiLabelSets = asciiLabelSets
        sorted.canonicalLabelSets = canonicalLabelSets
        sorted.files = files
        sorted.fileIndex = fileIndex
        sorted.nameBytes.reserveCapacity(nameBytes.count)
        sorted.nameEnds.reserveCapacity(count)
        sorted.registrations.reserveCapacity(count)
        sorted.labelSetColumn.reserveCapacity(count)
        sorted.fileColumn.reserveCapacity(count)
        sorted.lines.reserveCapacity(count)
        if !columns.isEmpty { sorted.columns.reserveCapacity(count) }
        if !registrationLines.isEmpty {
            sorted.registrationLines.reserveCapacity(count)
            sorted.registrationColumns.reserveCapacity(count)
        }
        for (position, old) in order.enumerated() {
            sorted.nameBytes.append(contentsOf: nameBytes[nameRange(old)])
            sorted.nameEnds.append(UInt32(sorted.nameBytes.count))
            sorted.registrations.append(registrations[old])
            sorted.labelSetColumn.append(labelSetColumn[old])
            sorted.fileColumn.append(fileColumn[old])
            sorted.lines.append(lines[old])
            if !columns.isEmpty { sorted.columns.append(columns[old]) }
            if !registrationLines.isEmpty {
                sorted.registrationLines.append(registrationLines[old])
                sorted.registrationColumns.append(registrationColumns[old])
            }
            if !registrationsElsewhere.isEmpty, let written = registrationsElsewhere[old] { sorted.registrationsElsewhere[position] = written }
        }
        sorted.rebuildIndex()
        return sorted
    }

    static func precedes(_ a: UnsafeBufferPointer<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        b.withUnsafeBufferPointer { precedes(a, $0) }
    }

    static func precedes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        if a.allSatisfy({ $0 < 0x80 }) && b.allSatisfy({ $0 < 0x80 }) {
            let common = min(a.count, b.count)
            let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
            return order != 0 ? order < 0 : a.count < b.count
        }
        return String(decoding: a, as: UTF8.self) < String(decoding: b, as: UTF8.self)
    }

    // MARK: the name index

    /// Seeded per process, eight bytes at a time: a fresh `Hasher` per name was 5 % of a ten-million-device load.
    private static let seed = UInt64.random(in: .min ... .max)

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        let hash = ByteHash.words(bytes, start: seed ^ UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        return Int(truncatingIfNeeded: hash ^ hash >> 29)
    }

    /// The position holding `name`, or the empty slot where it would go.
    private func find(_ name: UnsafeRawBufferPointer) -> (found: Int?, slot: Int) {
        guard !slots.isEmpty else { return (nil, 0) }
        let mask = slots.count - 1
        var slot = Self.hash(name) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { return (nil, slot) }
            let position = Int(entry) - 1
            let range = nameRange(position)
            if range.count == name.count && (name.isEmpty || equal(range, name)) { return (position, slot) }
            slot = (slot + 1) & mask
        }
    }

    private func equal(_ range: Range<Int>, _ name: UnsafeRawBufferPointer) -> Bool {
        nameBytes.withUnsafeBytes { all in memcmp(all.baseAddress! + range.lowerBound, name.baseAddress!, name.count) == 0 }
    }

    private mutating func insertIntoIndex(_ position: Int) {
        if slots.isEmpty || count * 4 > slots.count * 3 {
            rebuildIndex()
            return
        }
        let slot = nameBytes.withUnsafeBytes { all in
            find(UnsafeRawBufferPointer(rebasing: all[nameRange(position)])).slot
        }
        slots[slot] = UInt32(position + 1)
    }

    private mutating func rebuildIndex() {
        // At most two thirds full once built; grown when three quarters full.
        var capacity = 16
        while capacity * 2 < count * 3 { capacity *= 2 }
        rebuildIndex(capacity: capacity)
    }

    private mutating func rebuildIndex(capacity: Int) {
        slots = [UInt32](repeating: 0, count: capacity)
        let mask = capacity - 1
        nameBytes.withUnsafeBytes { all in
            for position in 0..<count {
                var slot = Self.hash(UnsafeRawBufferPointer(rebasing: all[nameRange(position)])) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = UInt32(position + 1)
            }
        }
    }
}

/// A label set of ASCII text as bytes: its pairs in key order, each key and value preceded by its length. Two
/// sets have the same key exactly when they are equal (for ASCII, String equality is byte equality).
struct LabelSetKey: Hashable, Sendable {
    let bytes: [UInt8]

    /// nil when a key or value is not ASCII, or a key is given twice.
    init?(_ labels: [(key: String, value: String)]) {
        let ordered = labels.count < 2 ? labels : labels.sorted { $0.key < $1.key }
        var bytes: [UInt8] = []
        var previous: String?
        for (key, value) in ordered {
            if key == previous { return nil }
            previous = key
            guard Self.appendASCII(key, to: &bytes), Self.appendASCII(value, to: &bytes) else { return nil }
        }
        self.bytes = bytes
    }

    /// Appends the text's length and bytes; false when it is not ASCII.
    private static func appendASCII(_ text: String, to bytes: inout [UInt8]) -> Bool {
        let utf8 = text.utf8
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: utf8)
        return true
    }

    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}
