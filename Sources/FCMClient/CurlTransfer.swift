import CCurl
import FCMCore
import Foundation

/// One easy handle and everything curl keeps pointers to (header list, buffers) until the transfer ends.
final class CurlTransfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    private(set) var url = ""
    private(set) var notAfter: Double?
    /// The request's whole time (curl's CURLOPT_TIMEOUT_MS), and when it ends: the worker enforces it too,
    /// because curl does not for a transfer still waiting for a connection (see `CurlTransport.expireOverdue`).
    private(set) var timeoutMilliseconds = 0
    var deadline: ContinuousClock.Instant?
    private let options: CurlTransport.Options
    var continuation: UnsafeContinuation<HTTPResponse, any Error>?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// The headers `headerList` was built from: consecutive requests on a handle nearly always send the same.
    private var listedHeaders: [(String, String)] = []
    /// The request's URL, parsed here: given a parsed URL as well as the text, curl neither parses the text
    /// again nor prints it back out byte by byte (`curl_url_get`): work repeated on every request otherwise.
    private let parsedURL = curl_url()
    private var body = Data()
    private var responseHeaders: [String: String] = [:]
    /// The transport's bound on an answer, and the current request's (no more than the transport's).
    private let transportMaximumBytes: Int
    private var maximumBytes: Int
    private var overflowed = false
    // curl writes into this until the transfer ends, so it must not move: heap memory, freed in deinit.
    private let errorBuffer: UnsafeMutablePointer<CChar> = {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        buffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return buffer
    }()

    /// A handle is reused for request after request (`prepare` resets it): creating one costs a handful of large
    /// allocations, too many to pay per request.
    private var configured = false

    /// Passed to the close-socket callback: the transport that watches this handle's sockets.
    private let closeContext: UnsafeMutableRawPointer?
    private let onClose: fcm_curl_closesocket_callback?

    init(options: CurlTransport.Options, onClose: fcm_curl_closesocket_callback? = nil, closeContext: UnsafeMutableRawPointer? = nil) throws {
        guard let easy = curl_easy_init() else { throw TransportError(url: "", message: "curl_easy_init failed") }
        self.easy = easy
        self.options = options
        transportMaximumBytes = options.maximumResponseBytes
        maximumBytes = options.maximumResponseBytes
        self.onClose = onClose
        self.closeContext = closeContext
    }

    /// The options every request shares.
    private func configure() {
        _ = fcm_easy_restrict_http(easy)
        _ = fcm_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = fcm_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeout.millisecondsRoundedUp)
        _ = fcm_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, options.totalTimeout.millisecondsRoundedUp)
        // A transfer slower than 1 byte/s for 30 s is stuck, whatever the total timeout says.
        _ = fcm_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = fcm_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, 30)
        _ = fcm_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // Over TLS FCM speaks HTTP/2: a new transfer waits for a connection that is still being set up
        // rather than opening its own, so hundreds of requests in flight share a few multiplexed connections.
        _ = fcm_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1)
        _ = fcm_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1)
        _ = fcm_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2)
        _ = fcm_easy_setopt_str(easy, CURLOPT_ACCEPT_ENCODING, "")
        _ = fcm_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = fcm_easy_setopt_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteBody)
        _ = fcm_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, me)
        _ = fcm_easy_setopt_callback(easy, CURLOPT_HEADERFUNCTION, curlWriteHeader)
        _ = fcm_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, me)
        if let onClose { _ = fcm_easy_setopt_closesocket(easy, onClose, closeContext) }
    }

    /// Sets the handle up for `request`. Options that never change are set once, on the first use; the ones
    /// a request chooses are all set each time, so nothing of the previous request carries over.
    func prepare(_ request: HTTPRequest) {
        if !configured {
            configure()
            configured = true
        }
        url = request.url
        notAfter = request.notAfter
        // Every request sets its own total deadline: a handle is reused, and a fenced request's shorter one
        // must not stick to the next.
        let total = options.totalTimeout.millisecondsRoundedUp
        timeoutMilliseconds = min(request.timeoutMilliseconds ?? total, total)
        deadline = nil
        _ = fcm_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        body = Data()
        responseHeaders = [:]
        overflowed = false
        maximumBytes = min(request.maximumResponseBytes ?? transportMaximumBytes, transportMaximumBytes)
        errorBuffer[0] = 0
        // withCString: passed as an argument, a String is copied into a new array on every call.
        request.url.withCString { url in
            if let parsedURL, curl_url_set(parsedURL, CURLUPART_URL, url, 0) == CURLUE_OK {
                _ = fcm_easy_setopt_ptr(easy, CURLOPT_CURLU, UnsafeMutableRawPointer(parsedURL))
            } else {
                // curl reports a malformed URL itself, in its own words.
                _ = fcm_easy_setopt_ptr(easy, CURLOPT_CURLU, nil)
            }
            _ = fcm_easy_setopt_str(easy, CURLOPT_URL, url)
        }
        // HTTPGET resets the method (and the upload flag) left by the previous request; NULL clears a custom one.
        _ = fcm_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
        _ = fcm_easy_setopt_ptr(easy, CURLOPT_CUSTOMREQUEST, nil)
        switch request.method {
        case "GET": break
        case "POST": _ = fcm_easy_setopt_long(easy, CURLOPT_POST, 1)
        default: _ = fcm_easy_setopt_str(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
        if let payload = request.body {
            _ = fcm_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(payload.count))
            // COPYPOSTFIELDS copies, so the body need not outlive this call.
            payload.withUnsafeBytes { raw in
                _ = fcm_easy_setopt_ptr(
                    easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
        } else if request.method == "POST" {
            _ = fcm_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0)
            _ = fcm_easy_setopt_str(easy, CURLOPT_COPYPOSTFIELDS, "")
        }
        if headerList == nil || !HTTPRequest.sameHeaders(request.headers, listedHeaders) {
            curl_slist_free_all(headerList)
            headerList = nil
            for (name, value) in request.headers {
                headerList = curl_slist_append(headerList, "\(name): \(value)")
            }
            // An empty Expect header stops curl from waiting for "100 Continue" on larger bodies.
            headerList = curl_slist_append(headerList, "Expect:")
            listedHeaders = request.headers
        }
        _ = fcm_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        curl_url_cleanup(parsedURL)
        errorBuffer.deallocate()
    }

    fileprivate func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if body.count + bytes.count > maximumBytes {
            overflowed = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Parses one header line on bytes: this runs for every header of every response.
    fileprivate func appendHeader(_ bytes: UnsafeRawBufferPointer) {
        if bytes.starts(with: "HTTP/".utf8) {
            responseHeaders.removeAll()  // a new response (after 100-continue or a redirect)
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), Self.isKept(UnsafeRawBufferPointer(rebasing: bytes[..<colon])) else { return }
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = colon + 1
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        let name = String(decoding: bytes[..<colon].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
        responseHeaders[name] = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// The response headers fcmctl reads (Retry-After; GCS's x-goog-*): the others are not turned into
    /// strings at all, a cost no request needs to pay.
    static func isKept(_ name: UnsafeRawBufferPointer) -> Bool {
        func hasPrefix(_ prefix: StaticString) -> Bool {
            guard name.count >= prefix.utf8CodeUnitCount else { return false }
            for offset in 0..<prefix.utf8CodeUnitCount {
                let byte = name[offset]
                let lowered = byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte
                if lowered != prefix.utf8Start[offset] { return false }
            }
            return true
        }
        return (name.count == 11 && hasPrefix("retry-after")) || hasPrefix("x-goog-")
    }

    func complete(code: CURLcode) {
        if code != CURLE_OK {
            let detail = String(cString: errorBuffer)
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            finish(.failure(TransportError(url: url, message: message, answerLimit: overflowed ? maximumBytes : nil)))
            return
        }
        var status = 0
        _ = fcm_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        finish(.success(HTTPResponse(status: status, headers: responseHeaders, body: body)))
        // The handle waits in the idle pool: it must not keep the answer (a state file, say) alive.
        body = Data()
        responseHeaders = [:]
    }

    /// Ends a transfer whose deadline passed while curl still held it (the caller has removed it from curl).
    func expire() {
        var sent = 0
        _ = fcm_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &sent)
        let seconds = Double(timeoutMilliseconds) / 1000
        let limit = seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
        let message =
            sent == 0
            ? "not sent within \(limit): no connection to the server became free for it" : "no complete answer within \(limit)"
        finish(.failure(TransportError(url: url, message: message)))
        body = Data()
        responseHeaders = [:]
    }

    func finish(_ result: Result<HTTPResponse, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }
}

private let curlWriteBody: fcm_curl_data_callback = { pointer, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    guard let pointer else { return length }
    return transfer.appendBody(UnsafeRawBufferPointer(start: pointer, count: length)) ? length : 0
}

private let curlWriteHeader: fcm_curl_data_callback = { pointer, size, count, userdata in
    guard let userdata, let pointer else { return size * count }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    transfer.appendHeader(UnsafeRawBufferPointer(start: pointer, count: length))
    return length
}
