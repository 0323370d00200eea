import Foundation

/// The request log and per-endpoint counters. Registrations in paths are redacted: the log is meant to be
/// shared in CI artefacts.
actor RequestRecorder {
    struct Entry: Sendable {
        var method: String
        var path: String
        var endpoint: String
        var status: Int
        var latencyMs: Double
        var bytesIn: Int
        var bytesOut: Int
        /// What a token request asked for (see `TokenRequestFields`), so a test can compare two clients.
        var fields: [String: String]? = nil
        /// The `x-goog-user-project` a request named: the quota project of user credentials.
        var userProject: String? = nil
        /// The registrations the request touched, whole, so the log can be searched for one; shown redacted.
        var registrations: [String] = []
        /// The principal the request's token spoke for (`serviceAccount:…`), absent for `owner` and no token.
        var principal: String? = nil
        /// 1 for the first request recorded since the start or the last reset.
        var sequence = 0
        var time = Date()

        var json: [String: Any] {
            var object: [String: Any] = [
                "method": method, "path": path, "endpoint": endpoint, "status": status,
                "latency_ms": (latencyMs * 1000).rounded() / 1000, "bytes_in": bytesIn, "bytes_out": bytesOut, "seq": sequence,
                "time": Timestamp.rfc3339(time),
            ]
            if let fields { object["fields"] = fields }
            if let userProject { object["user_project"] = userProject }
            if let principal { object["principal"] = principal }
            if !registrations.isEmpty {
                object["registrations"] = registrations.prefix(Self.registrationsShown).map(RequestRecorder.redactRegistration)
                object["registration_count"] = registrations.count
            }
            return object
        }

        static let registrationsShown = 3
    }

    /// `GET /emulator/v1/requests?method=&path=&status=&endpoint=&registration=&after=&limit=`: every filter
    /// given must hold. `status` is a code (`503`), a class (`5xx`) or `0` for dropped connections; `path` a
    /// part of the (redacted) path; `registration` a whole token or FID; `after` a `seq` (the live tail asks
    /// for what came after the last entry it has); `limit` keeps the newest that many.
    struct Filter: Sendable {
        var method: String?
        var path: String?
        var status: String?
        var endpoint: String?
        var registration: String?
        var after = 0
        var limit: Int?

        init(query: [String: String]) {
            func given(_ name: String) -> String? { query[name].flatMap { $0.isEmpty ? nil : $0 } }
            method = given("method")?.uppercased()
            path = given("path")
            status = given("status")?.lowercased()
            endpoint = given("endpoint")
            registration = given("registration")
            after = given("after").flatMap { Int($0) } ?? 0
            limit = given("limit").flatMap { Int($0) }.map { max(0, $0) }
        }

        func matches(_ entry: Entry) -> Bool {
            if entry.sequence <= after { return false }
            if let method, entry.method != method { return false }
            if let endpoint, entry.endpoint != endpoint { return false }
            if let path, !SearchText(path).found(in: entry.path) { return false }
            if let registration, !entry.registrations.contains(registration) { return false }
            if let status {
                if status.count == 3, status.hasSuffix("xx"), let first = status.first?.wholeNumberValue {
                    if entry.status / 100 != first { return false }
                } else if String(entry.status) != status {
                    return false
                }
            }
            return true
        }
    }

    private var entries: [Entry] = []
    private var dropped = 0
    private let limit: Int
    private let file: FileHandle?
    private var counts: [String: [Int: Int]] = [:]
    /// Requests recorded since the start or the last reset: the `seq` of the newest.
    private var counted = 0

    init(limit: Int, logFile: String?) throws {
        self.limit = limit
        if let logFile {
            FileManager.default.createFile(atPath: logFile, contents: nil)
            guard let handle = FileHandle(forWritingAtPath: logFile) else {
                throw EmulatorSetupError("--request-log \(logFile): cannot open for writing")
            }
            file = handle
        } else {
            file = nil
        }
    }

    /// `entry.path` is the raw path: it is redacted here, and only if the entry is kept or written (the
    /// redaction cost more than the answer it records when the log is off).
    func record(_ entry: Entry) {
        counts[entry.endpoint, default: [:]][entry.status, default: 0] += 1
        counted += 1
        let kept = entries.count < limit
        if !kept { dropped += 1 }
        guard kept || file != nil else { return }
        var entry = entry
        entry.sequence = counted
        entry.path = Self.redact(entry.path)
        if kept { entries.append(entry) }
        if let file, let data = try? JSONSerialization.data(withJSONObject: entry.json, options: [.sortedKeys, .withoutEscapingSlashes]) {
            file.write(data + Data("\n".utf8))
        }
    }

    func reset() {
        entries = []
        dropped = 0
        counts = [:]
        counted = 0
    }

    var log: [Entry] { entries }

    /// The entries a filter lets through, oldest first, and the `seq` of the newest request recorded.
    func entries(matching filter: Filter) -> (entries: [Entry], last: Int) {
        // Entries are in `seq` order: skip what the tail already has without looking at it.
        var start = 0
        if filter.after > 0 {
            var high = entries.count
            while start < high {
                let middle = (start + high) / 2
                if entries[middle].sequence <= filter.after { start = middle + 1 } else { high = middle }
            }
        }
        guard let limit = filter.limit else { return (entries[start...].filter(filter.matches), counted) }
        var newest: [Entry] = []
        var index = entries.count - 1
        while index >= start, newest.count < limit {
            if filter.matches(entries[index]) { newest.append(entries[index]) }
            index -= 1
        }
        return (newest.reversed(), counted)
    }

    func stats(adding extra: [String: Int]) -> EmulatorResponse {
        var endpoints: [String: Any] = [:]
        for (endpoint, byStatus) in counts {
            endpoints[endpoint] = [
                "requests": byStatus.values.reduce(0, +),
                "by_status": Dictionary(uniqueKeysWithValues: byStatus.map { (String($0.key), $0.value) }),
            ]
        }
        var body: [String: Any] = ["endpoints": endpoints, "log_entries": entries.count, "log_dropped": dropped]
        for (key, value) in extra { body[key] = value }
        return .json(200, body)
    }

    /// `/v1/projects/p/registrations/fGw0qy4TGgk%3AAPA91b…/…` → `/v1/projects/p/registrations/fGw0qy…Xk3Q/…`.
    static func redact(_ path: String) -> String {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for index in segments.indices.dropLast() where ["registrations", "info"].contains(segments[index]) {
            segments[index + 1] = redactRegistration(segments[index + 1])
        }
        if segments.count >= 4, segments[1] == "iid", segments[2] == "v1", segments.count >= 5 { segments[3] = redactRegistration(segments[3]) }
        return segments.joined(separator: "/")
    }

    static func redactRegistration(_ raw: String) -> String {
        let value = raw.removingPercentEncoding ?? raw
        let characters = Array(value)
        if characters.count <= 12 { return String(characters.prefix(4)) + "…" }
        return String(characters.prefix(6)) + "…" + String(characters.suffix(4))
    }
}
