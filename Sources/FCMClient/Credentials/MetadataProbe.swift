import CCurl
import Foundation

/// Whether a GCE-style metadata server answers at a host: one blocking request with a short timeout, made
/// once while credentials are resolved, before any transport exists. Like google-auth's ping, only an
/// answer carrying `Metadata-Flavor: Google` counts, so a captive portal or another server on port 80 is
/// not taken for one.
package enum MetadataProbe {
    // curl_global_init counts its calls, so this and the transport's own both initializing is harmless.
    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    package static func answers(host: String, timeoutMilliseconds: Int = 1000) -> Bool {
        _ = globalInit
        guard let easy = curl_easy_init() else { return false }
        defer { curl_easy_cleanup(easy) }
        let headers = curl_slist_append(nil, "Metadata-Flavor: Google")
        defer { curl_slist_free_all(headers) }
        var flavored = false
        _ = fcm_easy_restrict_http(easy)
        _ = fcm_easy_setopt_str(easy, CURLOPT_URL, "http://\(host)/")
        _ = fcm_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = fcm_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, timeoutMilliseconds / 2)
        _ = fcm_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = fcm_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headers)
        _ = fcm_easy_setopt_callback(easy, CURLOPT_WRITEFUNCTION) { _, size, count, _ in size * count }
        _ = fcm_easy_setopt_callback(easy, CURLOPT_HEADERFUNCTION) { pointer, size, count, context in
            let length = size * count
            guard let pointer, let context else { return length }
            let line = String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "metadata-flavor",
                parts[1].trimmingCharacters(in: .whitespacesAndNewlines) == "Google"
            {
                context.assumingMemoryBound(to: Bool.self).pointee = true
            }
            return length
        }
        let answered = withUnsafeMutablePointer(to: &flavored) { flag -> Bool in
            _ = fcm_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, flag)
            return curl_easy_perform(easy) == CURLE_OK
        }
        return answered && flavored
    }
}
