/// A bucket of objects with generations, as Google Cloud Storage offers: no append, but every write and
/// delete can be conditional on the generation the writer last saw. The gcs state store is built on this;
/// FCMClient implements it over the GCS JSON API, tests over memory.
package protocol ObjectStorage: Sendable {
    /// `gs://bucket`, for messages.
    var displayName: String { get }
    /// The object's bytes and generation, or nil if there is none.
    func get(_ name: String) async throws -> StoredObject?
    /// Writes the object only if its generation is `ifGenerationMatch` (0: only if it does not exist).
    /// Returns the new generation; a failed condition throws `ObjectStorageError.preconditionFailed`.
    func put(_ name: String, _ bytes: [UInt8], ifGenerationMatch: Int64?) async throws -> Int64
    /// Deletes the object, if its generation still matches; a missing object throws `.notFound`.
    func delete(_ name: String, ifGenerationMatch: Int64?) async throws
    /// Names under `prefix`, sorted.
    func list(prefix: String) async throws -> [String]
}

package struct StoredObject: Sendable, Hashable {
    package var bytes: [UInt8]
    package var generation: Int64

    package init(bytes: [UInt8], generation: Int64) {
        self.bytes = bytes
        self.generation = generation
    }
}

package enum ObjectStorageError: Error, Sendable, CustomStringConvertible, Equatable {
    /// HTTP 412: the object's generation is not the one the write or delete was conditional on.
    case preconditionFailed(String)
    case notFound(String)
    /// Anything else, with the service's words: a permission refused, a bucket that does not exist.
    case failed(String)

    package var description: String {
        switch self {
        case .preconditionFailed(let name): "\(name) changed since it was read (generation mismatch)"
        case .notFound(let name): "\(name) does not exist"
        case .failed(let message): message
        }
    }
}
