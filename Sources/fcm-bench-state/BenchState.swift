import FCMCore
import FCMState
import Foundation

/// Writes the state an apply of a JSON Lines fleet would leave behind, without the apply: at ten million
/// devices that apply is thirty million requests. Used only by scripts/bench/ten_million.py.
///
/// The records come from the fleet file and the benchmark's one rule, that every label `KEY: VALUE` selects
/// the `additive` topic `KEY-VALUE` (the manifest the script writes declares exactly those selectors). The
/// bytes come from fcmctl's own code: the ledger is written by the local store's state manager
/// (`StateFileFormat.encode`, the serial record beside it), and `applied` is `AppliedDeclarations.of`, taken
/// over slices of the fleet so that no whole `DesiredState` is held beside the ledger. The script's smoke mode
/// checks the result against the state a real `fcmctl apply` writes for the same fleet.
///
///     fcm-bench-state --devices FLEET.jsonl --project ID --sender-id N --state PATH
@main
struct BenchState {
    struct Options {
        var devices = ""
        var project = ""
        var senderId = ""
        var state = ""
    }

    static func main() async {
        do {
            let options = try parse(Array(CommandLine.arguments.dropFirst()))
            let summary = try await write(options)
            print("wrote \(options.state): \(summary)")
        } catch {
            FileHandle.standardError.write(Data("fcm-bench-state: \(error)\n".utf8))
            exit(1)
        }
    }

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            switch flag {
            case "--devices": options.devices = value
            case "--project": options.project = value
            case "--sender-id": options.senderId = value
            case "--state": options.state = value
            default: throw UsageError(description: "unknown option \(flag)")
            }
        }
        guard !options.devices.isEmpty, !options.project.isEmpty, !options.state.isEmpty else {
            throw UsageError(description: "usage: fcm-bench-state --devices FLEET.jsonl --project ID [--sender-id N] --state PATH")
        }
        return options
    }

    /// Devices are folded into `applied` this many at a time: large enough that the per-slice work is cheap,
    /// small enough that the slice's `DesiredState` is a rounding error beside the ledger.
    static let slice = 100_000

    static func write(_ options: Options) async throws -> String {
        var ledger = Ledger(serial: 1)
        // What an apply of the whole manifest leaves: its declarations account for every subscription.
        ledger.declarationsTrusted = true
        ledger.project = ProjectBinding(id: options.project, senderId: options.senderId)
        let settings = ProjectSettings(id: options.project, senderId: options.senderId)
        var pending: [(Registration, [String])] = []
        var devices = 0
        var subscriptions = 0

        func fold() {
            var topics: [String: DesiredTopic] = [:]
            for (registration, names) in pending {
                for name in names { topics[name, default: DesiredTopic(name: name, members: [])].members.insert(registration) }
            }
            let applied = AppliedDeclarations.of(DesiredState(project: settings, topics: topics))
            ledger.applied.registrations.merge(applied.registrations) { _, slice in slice }
            pending.removeAll(keepingCapacity: true)
        }

        try forEachLine(options.devices) { line, number in
            let device = try parseDevice(line, file: options.devices, line: number)
            let registration = Registration(value: device.value, kind: device.kind)
            guard ledger.deviceNames.updateValue(device.name, forKey: registration) == nil else {
                throw UsageError(description: "\(options.devices):\(number): a registration appears twice")
            }
            let topics = device.labels.map { "\($0.key)-\($0.value)" }
            for topic in topics { ledger.topics[topic, default: []].insert(registration) }
            devices += 1
            subscriptions += topics.count
            pending.append((registration, topics))
            if pending.count == slice { fold() }
        }
        fold()

        let store = LocalStateStore(path: options.state)
        _ = try await store.manager.write(ledger, replacing: nil, force: false)
        return "\(devices) devices, \(ledger.topics.count) topics, \(subscriptions) subscriptions"
    }

    struct Device {
        var name: String
        var value: String
        var kind: Registration.Kind
        var labels: [String: String]
    }

    static func parseDevice(_ line: [UInt8], file: String, line number: Int) throws -> Device {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let name = object["name"] as? String
        else { throw UsageError(description: "\(file):\(number): not a device line") }
        let labels = (object["labels"] as? [String: String]) ?? [:]
        if let token = object["token"] as? String { return Device(name: native(name), value: native(token), kind: .token, labels: labels) }
        if let fid = object["fid"] as? String { return Device(name: native(name), value: native(fid), kind: .fid, labels: labels) }
        throw UsageError(description: "\(file):\(number): a device without a token or fid")
    }

    /// Bridged strings are slow to hash for the rest of the run (as DeviceFileReader says).
    static func native(_ text: String) -> String {
        var copy = text
        copy.makeContiguousUTF8()
        return copy
    }

    /// Streams the file: a ten-million-line fleet is several gigabytes.
    static func forEachLine(_ path: String, _ body: ([UInt8], Int) throws -> Void) throws {
        guard let file = fopen(path, "r") else { throw UsageError(description: "\(path): cannot open (errno \(errno))") }
        defer { fclose(file) }
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        var number = 0
        while true {
            let count = getline(&buffer, &capacity, file)
            guard count >= 0, let buffer else { break }
            number += 1
            var length = count
            while length > 0, buffer[length - 1] == 0x0A || buffer[length - 1] == 0x0D { length -= 1 }
            guard length > 0 else { continue }
            try body(Array(UnsafeRawBufferPointer(start: buffer, count: length)), number)
        }
    }
}
