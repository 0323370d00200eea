/// A bucket of objects with generations, as Google Cloud Storage offers: every write and delete can be
/// conditional on the generation the writer last saw. This is all FCMState's state manager asks of a medium:
/// FCMClient implements it over the GCS JSON API, FCMState over a directory of files and over memory.
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
    /// Calls `body` with each line of the object (without its newline); false if there is no such object.
    /// A medium that can scan without holding the whole object (a file) does, for journals of a million lines.
    func forEachLine(_ name: String, _ body: (ArraySlice<UInt8>) -> Void) async throws -> Bool
    /// The object opened for appends, where the medium can append (a file); nil where it cannot (a bucket),
    /// and a journal is then one new object per append. `reserving`: room to set aside up front, so a full
    /// disk stops a run before its first request rather than in the middle.
    func openAppendable(_ name: String, reserving bytes: Int) async throws -> (any AppendableObject)?
}

/// An object that grows by appends: once `append` returns, the bytes survive the process being killed.
package protocol AppendableObject: Sendable {
    func append(_ bytes: [UInt8]) throws
}

extension ObjectStorage {
    package func forEachLine(_ name: String, _ body: (ArraySlice<UInt8>) -> Void) async throws -> Bool {
        guard let object = try await get(name) else { return false }
        var start = 0
        for index in object.bytes.indices where object.bytes[index] == UInt8(ascii: "\n") {
            body(object.bytes[start..<index])
            start = index + 1
        }
        if start < object.bytes.count { body(object.bytes[start...]) }
        return true
    }

    package func openAppendable(_ name: String, reserving bytes: Int) async throws -> (any AppendableObject)? { nil }
}

package struct StoredObject: Sendable, Hashable {
    package var bytes: [UInt8]
    package var generation: Int64

    package init(bytes: [UInt8], generation: Int64) {
        self.bytes = bytes
        self.generation = generation
    }
}

package enum ObjectStorageError: Error, Sendable, Equatable {
    /// HTTP 412: the object's generation is not the one the write or delete was conditional on.
    case preconditionFailed(String)
    case notFound(String)
    /// Anything else, with the service's words: a permission refused, a bucket that does not exist.
    case failed(String)
}
