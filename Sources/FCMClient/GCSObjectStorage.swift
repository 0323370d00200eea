import FCMCore
import Foundation

/// Google Cloud Storage through its JSON API, on the same libcurl transport, credentials and retry policy
/// as FCM. Uploads are `uploadType=multipart` (metadata and media in one request), because that is where
/// `ifGenerationMatch` is honoured by real GCS and by fake-gcs-server alike.
package struct GCSObjectStorage: ObjectStorage {
    package let bucket: String
    /// `https://storage.googleapis.com`, or `http://HOST:PORT` from STORAGE_EMULATOR_HOST.
    package let base: String
    let sender: RequestSender
    /// Keeps the transport's worker running while this storage (and its copies) are in use.
    let lifetime: TransportLifetime?

    package init(bucket: String, base: String, sender: RequestSender, lifetime: TransportLifetime? = nil) {
        self.bucket = bucket
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.sender = sender
        self.lifetime = lifetime
    }

    /// What Google's client libraries read: `host:port` or a URL, and no credentials.
    package static func emulatorBase(_ environment: [String: String]) -> String? {
        guard let host = environment["STORAGE_EMULATOR_HOST"], !host.isEmpty else { return nil }
        return host.hasPrefix("http://") || host.hasPrefix("https://") ? host : "http://\(host)"
    }

    package var displayName: String { "gs://\(bucket)" }

    static func encode(_ component: String) -> String { URLComponentEncoder.encode(component) }

    var objectsURL: String { "\(base)/storage/v1/b/\(Self.encode(bucket))/o" }

    package func get(_ name: String) async throws -> StoredObject? {
        let response = try await send(HTTPRequest(method: "GET", url: "\(objectsURL)/\(Self.encode(name))?alt=media"), name)
        if response.status == 404 { return nil }
        try check(response, name)
        guard let generation = response.headers["x-goog-generation"].flatMap({ Int64($0) }) else {
            throw ObjectStorageError.failed("\(displayName)/\(name): the answer carried no x-goog-generation header")
        }
        return StoredObject(bytes: Array(response.body), generation: generation)
    }

    package func put(_ name: String, _ bytes: [UInt8], ifGenerationMatch: Int64?) async throws -> Int64 {
        let boundary = "fcmctl-\(UInt64.random(in: 0...UInt64.max))"
        var body = Data()
        body.append(Data("--\(boundary)\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".utf8))
        body.append(try JSONSerialization.data(withJSONObject: ["name": name, "contentType": "application/json"]))
        body.append(Data("\r\n--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8))
        body.append(Data(bytes))
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        var url = "\(base)/upload/storage/v1/b/\(Self.encode(bucket))/o?uploadType=multipart"
        if let ifGenerationMatch { url += "&ifGenerationMatch=\(ifGenerationMatch)" }
        let request = HTTPRequest(
            method: "POST", url: url, headers: [("Content-Type", "multipart/related; boundary=\(boundary)")], body: body)
        let response = try await send(request, name)
        try check(response, name)
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let generation = (object["generation"] as? String).flatMap({ Int64($0) }) ?? (object["generation"] as? NSNumber)?.int64Value
        else {
            throw ObjectStorageError.failed("\(displayName)/\(name): the upload's answer carried no generation")
        }
        return generation
    }

    package func delete(_ name: String, ifGenerationMatch: Int64?) async throws {
        var url = "\(objectsURL)/\(Self.encode(name))"
        if let ifGenerationMatch { url += "?ifGenerationMatch=\(ifGenerationMatch)" }
        let response = try await send(HTTPRequest(method: "DELETE", url: url), name)
        if response.status == 404 { throw ObjectStorageError.notFound(name) }
        try check(response, name)
    }

    package func list(prefix: String) async throws -> [String] {
        var names: [String] = []
        var pageToken: String?
        repeat {
            var url = "\(objectsURL)?prefix=\(Self.encode(prefix))"
            if let pageToken { url += "&pageToken=\(Self.encode(pageToken))" }
            let response = try await send(HTTPRequest(method: "GET", url: url), prefix)
            try check(response, prefix)
            let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
            names += ((object["items"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
            pageToken = object["nextPageToken"] as? String
        } while pageToken != nil
        return names.sorted()
    }

    private func send(_ request: HTTPRequest, _ name: String) async throws -> HTTPResponse {
        do {
            return try await sender.send(request)
        } catch {
            throw ObjectStorageError.failed("\(displayName)/\(name): \(error)")
        }
    }

    /// 412 is the generation condition; other refusals carry GCS's message (permission, missing bucket).
    private func check(_ response: HTTPResponse, _ name: String) throws {
        if (200..<300).contains(response.status) { return }
        if response.status == 412 { throw ObjectStorageError.preconditionFailed(name) }
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        let message = (object?["error"] as? [String: Any])?["message"] as? String ?? String(decoding: response.body.prefix(300), as: UTF8.self)
        var advice = ""
        if response.status == 403, let permission = IAMAdvice.permission(in: response.body) ?? Self.storagePermission(in: message) {
            // GCS says which permission; the role that grants it is what a person asks their admin for.
            let role = permission.hasSuffix(".get") || permission.hasSuffix(".list") ? "roles/storage.objectViewer" : "roles/storage.objectUser"
            advice = ". The credentials lack \(permission), which \(role) on the bucket grants"
        }
        throw ObjectStorageError.failed("HTTP \(response.status) for \(displayName)/\(name): \(ConsoleText.oneLine(message))\(advice)")
    }

    /// GCS words a refusal "… does not have storage.objects.create access to …".
    static func storagePermission(in message: String) -> String? {
        guard let start = message.range(of: "does not have ") else { return nil }
        let word = message[start.upperBound...].prefix { $0.isLetter || $0 == "." }
        return word.hasPrefix("storage.") && word.split(separator: ".").count == 3 ? String(word) : nil
    }
}
