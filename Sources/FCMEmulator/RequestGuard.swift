import Foundation

/// Keeps web pages from driving the emulator. Its admin API needs no credentials (tests and scripts call
/// it), so a page in the user's browser must not be able to call it either:
///
/// - **Host**: every request must be addressed to the emulator by a name it knows: a loopback name or
///   address (`localhost`, `127.0.0.1`, `[::1]`), the address it is bound to, or a name given with
///   `--allowed-host`; bound to every interface (`--host 0.0.0.0`), any IP address too. A page on
///   `attacker.example` whose name is re-pointed at 127.0.0.1 (DNS rebinding) sends `Host: attacker.example`
///   and is refused; a rebinding needs a name, so an IP literal is never one. The port is not compared:
///   a container's published port may differ from the one the emulator binds.
/// - **Origin**: a request that changes something (any method but GET and HEAD), to the admin API or to an
///   FCM endpoint, carries no `Origin` (scripts, SDKs, curl) or the emulator's own: the same host and port
///   as the request's `Host`, or another loopback spelling of it (`localhost` for `127.0.0.1`, same port).
///   Browsers send `Origin` with every cross-origin POST, form posts included.
/// - **Content-Type**: a change to the admin API (`/emulator/…`) must be `application/json`, which no form
///   can send and which makes a browser ask first (a CORS preflight); the emulator answers no preflight, so
///   a page elsewhere never gets to send it.
struct RequestGuard: Sendable {
    /// What a refusal was for: the keys of `GET /emulator/v1/stats`' `refused_…` counts.
    enum Reason: String, CaseIterable, Sendable {
        case host
        case origin
        case contentType = "content_type"
        case preflight
    }

    /// Lower-cased names from `--allowed-host`, and the bound host.
    let names: Set<String>
    /// `--allowed-host '*'`: no Host check at all.
    let anyHost: Bool
    /// Bound to every interface: any IP literal is one of the emulator's addresses.
    let anyAddress: Bool
    let boundHost: String

    init(boundHost: String, allowedHosts: [String]) {
        let bound = Authority.unbracketed(boundHost.lowercased())
        self.boundHost = boundHost
        anyAddress = Self.wildcardHosts.contains(bound)
        anyHost = allowedHosts.contains("*")
        names = Set(allowedHosts.map { Authority.unbracketed($0.lowercased()) } + (anyAddress ? [] : [bound]))
    }

    static let wildcardHosts: Set<String> = ["", "0.0.0.0", "::", "0:0:0:0:0:0:0:0"]

    /// An `--allowed-host` value: a host name, an IP address (IPv6 with or without brackets) or `*`.
    static func isAllowedHostValue(_ text: String) -> Bool {
        if text == "*" { return true }
        let name = Authority.unbracketed(text)
        if Authority.isIPLiteral(name) { return true }
        return !name.isEmpty && name.utf8.count <= 253
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == 0x2D || byte == 0x2E || byte == 0x5F
            }
    }

    /// Looks only at the request line and headers: a refused body is never read.
    func refusal(method: String, path: String, headers: [String: String]) -> (Reason, EmulatorResponse)? {
        let host = headers["host"].map(Authority.init)
        if let host, !accepts(host) {
            return (
                .host,
                .rpcError(
                    403,
                    "Host \(Quoted.text(host.raw)) is not an address of this fcm-emulator: it answers requests addressed to localhost, "
                        + "127.0.0.1, [::1], the address it is bound to (--host \(boundHost))\(anyAddress ? " or any IP address" : ""), "
                        + "and names given with --allowed-host. A web page can reach a local server under a name of its own (DNS rebinding), "
                        + "so other names are refused; if \(Quoted.text(host.name)) really names this emulator (a container's service name), "
                        + "start it with --allowed-host \(Quoted.text(host.name))")
            )
        }
        // As the router sees it: empty segments skipped and percent-escapes decoded (`//%65mulator/v1/reset`).
        let admin = path.utf8.split(separator: UInt8(ascii: "/")).first.map { EmulatorRequest.decode($0) } == "emulator"
        if admin && method == "OPTIONS" {
            return (
                .preflight,
                .rpcError(
                    403,
                    "fcm-emulator answers no CORS preflight: its admin API is for its own page (the inspector) and for clients "
                        + "that are not web pages (scripts, tests, curl), so a page on another origin cannot call it")
            )
        }
        guard method != "GET" && method != "HEAD" else { return nil }
        if let origin = headers["origin"], !isOwn(origin: origin, host: host) {
            return (
                .origin,
                .rpcError(
                    403,
                    "Origin \(Quoted.text(origin)) is not this fcm-emulator's own (\(host.map { Quoted.text("http://" + $0.raw) } ?? "its address")): a \(method) that "
                        + "changes the emulator is taken only from its own page or from a client that sends no Origin (scripts, SDKs, curl), "
                        + "so a web page elsewhere cannot reset, replace or change it")
            )
        }
        if admin {
            let type = headers["content-type"]
            let media = type?.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if media != "application/json" {
                return (
                    .contentType,
                    .rpcError(
                        403,
                        "\(method) \(Quoted.text(path)) needs 'Content-Type: application/json' (got \(type.map(Quoted.text) ?? "none")): the admin "
                            + "API takes changes only as JSON, which a web page on another origin cannot send without the browser asking "
                            + "first, and fcm-emulator answers no such request (CORS preflight)")
                )
            }
        }
        return nil
    }

    func accepts(_ host: Authority) -> Bool {
        if anyHost || names.contains(host.name) || host.isLoopback { return true }
        return anyAddress && Authority.isIPLiteral(host.name)
    }

    /// The page that sent the request is the emulator's: its origin names the host and port the request was
    /// sent to, or another loopback spelling of them.
    func isOwn(origin: String, host: Authority?) -> Bool {
        guard let host else { return false }
        let lowered = origin.lowercased()
        let (scheme, rest): (String, Substring)
        if lowered.hasPrefix("http://") {
            (scheme, rest) = ("http", lowered.dropFirst(7))
        } else if lowered.hasPrefix("https://") {
            (scheme, rest) = ("https", lowered.dropFirst(8))
        } else {
            return false  // "null" (a sandboxed frame, a file:// page) and other schemes
        }
        guard !rest.contains("/") else { return false }
        let page = Authority(String(rest))
        guard page.port(defaultFor: scheme) == host.port(defaultFor: scheme) else { return false }
        return page.name == host.name || (page.isLoopback && host.isLoopback)
    }
}

/// A `Host` header or the authority of an `Origin`: `name[:port]`, the name lower-cased and an IPv6
/// address without its brackets.
struct Authority: Sendable {
    let raw: String
    let name: String
    let port: String?

    init(_ text: String) {
        raw = text
        let lowered = text.lowercased()
        if lowered.hasPrefix("["), let close = lowered.firstIndex(of: "]") {
            name = String(lowered[lowered.index(after: lowered.startIndex)..<close])
            let after = lowered[lowered.index(after: close)...]
            port = after.hasPrefix(":") ? String(after.dropFirst()) : nil
        } else if let colon = lowered.lastIndex(of: ":"), lowered.firstIndex(of: ":") == colon {
            name = String(lowered[..<colon])
            port = String(lowered[lowered.index(after: colon)...])
        } else {
            name = lowered
            port = nil
        }
    }

    /// The port, nil when it is the scheme's default (as a browser leaves it out).
    func port(defaultFor scheme: String) -> String? {
        guard let port, !port.isEmpty else { return nil }
        return port == (scheme == "https" ? "443" : "80") ? nil : port
    }

    var isLoopback: Bool { name == "localhost" || Self.isLoopbackIP(name) }

    static func unbracketed(_ text: String) -> String {
        text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
    }

    static func isIPLiteral(_ name: String) -> Bool { ipv4(name) != nil || ipv6(name) != nil }

    /// 127.0.0.0/8 and ::1.
    static func isLoopbackIP(_ name: String) -> Bool {
        if let address = ipv4(name) { return address.0 == 127 }
        if let address = ipv6(name) { return address == [UInt8](repeating: 0, count: 15) + [1] }
        return false
    }

    static func ipv4(_ name: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        var address = in_addr()
        guard inet_pton(AF_INET, name, &address) == 1 else { return nil }
        return withUnsafeBytes(of: address) { ($0[0], $0[1], $0[2], $0[3]) }
    }

    static func ipv6(_ name: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, name, &address) == 1 else { return nil }
        return withUnsafeBytes(of: address) { Array($0) }
    }
}

/// Text from a request or a file, quoted for a message: JSON-style, with control and format characters
/// escaped and long text cut, so nothing printed from it can move a terminal's cursor or forge a line.
enum Quoted {
    static let limit = 80

    static func text(_ text: String) -> String {
        var out = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                out += "…"
                break
            }
            count += 1
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                switch scalar.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// How many requests `RequestGuard` refused since start, for `GET /emulator/v1/stats`: a test (or a person
/// wondering why their page gets 403) sees that the request arrived and why it was refused.
actor RefusalCounts {
    private var counts: [RequestGuard.Reason: Int] = [:]

    func count(_ reason: RequestGuard.Reason) { counts[reason, default: 0] += 1 }

    var stats: [String: Int] {
        Dictionary(uniqueKeysWithValues: RequestGuard.Reason.allCases.map { ("refused_\($0.rawValue)", counts[$0] ?? 0) })
    }
}
