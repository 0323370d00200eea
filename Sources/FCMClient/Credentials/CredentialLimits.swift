import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How large a credential may be. Each bound is far above anything Google issues and far below what would
/// cost memory or stall a request: a file or answer past it is refused, naming the file or URL, never the value.
package enum CredentialLimits {
    /// Credentials files and `credential_source.file`: a service-account key is about 2.4 KB, an
    /// external_account file 1 KB, a GitHub OIDC token 1-2 KB. A larger file is the wrong file.
    package static let fileBytes = 1 << 20
    /// What curl keeps of a token, metadata, STS, IAM Credentials or subject-token URL answer: the transfer
    /// stops past it. A token of `accessTokenBytes` and its JSON fit many times over.
    package static let answerBytes = 1 << 20
    /// An access token travels as a header on every request. STS documents its tokens at 12,288 bytes at
    /// most (ExchangeTokenResponse.access_token, cloud.google.com/iam/docs/reference/sts/rest/v1/TopLevel/token);
    /// OAuth and IAM Credentials tokens are smaller. curl refuses a request head over 1 MiB outright.
    package static let accessTokenBytes = 16 << 10
    /// A subject token goes in the STS form body: an OIDC JWT is a few KB, a SAML assertion tens of KB.
    package static let subjectTokenBytes = 256 << 10

    /// "16384 bytes (16 KiB)": the figure a message quotes.
    static func describe(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes) bytes (\(bytes >> 20) MiB)" : "\(bytes) bytes (\(bytes >> 10) KiB)"
    }
}

/// Reading a file that may be anything: its size is checked before it is read (`fstat`), and the read stops one
/// byte past the limit for a file whose size the system does not know (a pipe, a device), so a huge or endless
/// file costs at most the limit in memory.
enum BoundedFile {
    enum Failure: Error {
        /// errno of the open or read.
        case unreadable(Int32)
        /// The size when the system told it; nil when the read went past the limit.
        case tooLarge(Int?)
    }

    static func contents(of path: String, limit: Int) -> Result<Data, Failure> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(.unreadable(errno)) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, Int(status.st_size) > limit {
            return .failure(.tooLarge(Int(status.st_size)))
        }
        var data = Data()
        let chunk = 64 << 10
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let wanted = min(chunk, limit + 1 - data.count)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(errno))
            }
            if count == 0 { return .success(data) }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit { return .failure(.tooLarge(nil)) }
        }
    }

    /// "is 314572800 bytes, over the 1048576 bytes (1 MiB) fcmctl reads".
    static func tooLargeText(_ size: Int?, limit: Int) -> String {
        (size.map { "is \($0) bytes, over" } ?? "is over") + " the \(CredentialLimits.describe(limit)) fcmctl reads"
    }
}
