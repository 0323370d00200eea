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
    /// Columns other than 1 (a device file's devices start their line; YAML's are indented).
    private var columns: [Int: UInt32] = [:]
    /// Where a registration is written when not where its device is (YAML's `token:` under the name).
    private var registrationLocations: [Int: SourceLocation] = [:]
    /// The distinct label sets, the empty one first.
    package private(set) var labelSets: [[String: String]] = [[:]]
    private var labelSetIndex: [[String: String]: UInt32] = [[:]: 0]
    private var files: [String] = []
    private var fileIndex: [String: UInt32] = [:]
    /// Open addressing over the names: position + 1, 0 for empty.
    private var slots: [UInt32] = []
    private(set) var isSortedByName = true

    package init() {}

    /// YAML devices, as the decoder gathers them.
    init(_ devices: [String: ManifestDevice]) {
        for name in devices.keys.sorted() { _ = append(devices[name]!) }
    }

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
        SourceLocation(file: files[Int(fileColumn[position])], line: Int(lines[position]), column: Int(columns[position] ?? 1))
    }

    package func registrationLocation(at position: Int) -> SourceLocation { registrationLocations[position] ?? location(at: position) }

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
    mutating func append(_ device: ManifestDevice) -> Int? {
        let location = device.location
        let registration = device.registration.map { Registration(value: $0.value, kind: device.kind) }
        guard
            let taken = append(
                name: device.name, registration: registration, labels: device.labels, file: location.file, line: location.line,
                column: location.column)
        else {
            if let written = device.registration?.location, written != location { registrationLocations[count - 1] = written }
            return nil
        }
        return taken
    }

    /// Adds a device unless its name is taken; returns the position of the one holding it if it is.
    mutating func append(name: String, registration: Registration?, labels: [String: String], file: String, line: Int, column: Int) -> Int? {
        var name = name
        let taken: Int? = name.withUTF8 { bytes in
            let (found, _) = find(UnsafeRawBufferPointer(bytes))
            if found != nil { return found }
            if let last = nameEnds.indices.last, isSortedByName, Self.precedes(bytes, nameBytes[nameRange(last)]) {
                isSortedByName = false
            }
            nameBytes.append(contentsOf: bytes)
            return nil
        }
        if let taken { return taken }
        precondition(nameBytes.count < Int(UInt32.max), "more than 4 GiB of device names")
        nameEnds.append(UInt32(nameBytes.count))
        registrations.append(registration?.ordinal ?? Self.none)
        labelSetColumn.append(labelSetNumber(labels))
        fileColumn.append(fileNumber(file))
        lines.append(UInt32(clamping: line))
        if column != 1 { columns[count - 1] = UInt32(clamping: column) }
        insertIntoIndex(count - 1)
        return nil
    }

    /// Appends `other`'s devices; returns, for each whose name was taken, (the position here, the position in other).
    mutating func merge(_ other: DeviceTable) -> [(Int, Int)] {
        if isEmpty {
            self = other
            return []
        }
        var duplicates: [(Int, Int)] = []
        for position in 0..<other.count {
            let location = other.location(at: position)
            if let taken = append(
                name: other.name(at: position), registration: other.registration(at: position), labels: other.labels(at: position),
                file: location.file, line: location.line, column: location.column)
            {
                duplicates.append((taken, position))
            } else if let written = other.registrationLocations[position] {
                registrationLocations[count - 1] = written
            }
        }
        return duplicates
    }

    private mutating func labelSetNumber(_ labels: [String: String]) -> UInt32 {
        if let number = labelSetIndex[labels] { return number }
        let number = UInt32(labelSets.count)
        labelSets.append(labels)
        labelSetIndex[labels] = number
        return number
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
        sorted.labelSetIndex = labelSetIndex
        sorted.files = files
        sorted.fileIndex = fileIndex
        sorted.nameBytes.reserveCapacity(nameBytes.count)
        sorted.nameEnds.reserveCapacity(count)
        sorted.registrations.reserveCapacity(count)
        sorted.labelSetColumn.reserveCapacity(count)
        sorted.fileColumn.reserveCapacity(count)
        sorted.lines.reserveCapacity(count)
        for (position, old) in order.enumerated() {
            sorted.nameBytes.append(contentsOf: nameBytes[nameRange(old)])
            sorted.nameEnds.append(UInt32(sorted.nameBytes.count))
            sorted.registrations.append(registrations[old])
            sorted.labelSetColumn.append(labelSetColumn[old])
            sorted.fileColumn.append(fileColumn[old])
            sorted.lines.append(lines[old])
            if let column = columns[old] { sorted.columns[position] = column }
            if let written = registrationLocations[old] { sorted.registrationLocations[position] = written }
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

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
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
