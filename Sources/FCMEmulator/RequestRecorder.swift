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

        var json: [String: Any] {
            var object: [String: Any] = [
                "method": method, "path": path, "endpoint": endpoint, "status": status,
                "latency_ms": (latencyMs * 1000).rounded() / 1000, "bytes_in": bytesIn, "bytes_out": bytesOut,
            ]
            if let fields { object["fields"] = fields }
            if let userProject { object["user_project"] = userProject }
            return object
        }
    }

    private var entries: [Entry] = []
    private var dropped = 0
    private let limit: Int
    private let file: FileHandle?
    private var counts: [String: [Int: Int]] = [:]

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
        let kept = entries.count < limit
        if !kept { dropped += 1 }
        guard kept || file != nil else { return }
        var entry = entry
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
    }

    var log: [Entry] { entries }

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
