import FCMCore
import FCMState
import Synchronization

/// A bucket in memory with GCS's generation rules (every write a new generation; conditions on create,
/// update and delete): the in-memory store's medium, and the gcs store's in unit tests. `commitThenFail`
/// makes the next write take effect and then report a 412, as a create retried after a lost reply sees.
package final class MemoryObjectStorage: ObjectStorage {
    private struct Bucket {
        var objects: [String: StoredObject] = [:]
        var nextGeneration: Int64 = 1_000
        var commitThenFail = false
    }

    private let bucket = Mutex(Bucket())
    package let displayName: String

    package init(displayName: String = "gs://memory") { self.displayName = displayName }

    package var commitThenFail: Bool {
        get { bucket.withLock { $0.commitThenFail } }
        set { bucket.withLock { $0.commitThenFail = newValue } }
    }

    package func get(_ name: String) async throws -> StoredObject? { bucket.withLock { $0.objects[name] } }

    package func put(_ name: String, _ bytes: [UInt8], ifGenerationMatch: Int64?) async throws -> Int64 {
        try bucket.withLock {
            if let condition = ifGenerationMatch, ($0.objects[name]?.generation ?? 0) != condition {
                throw ObjectStorageError.preconditionFailed(name)
            }
            $0.nextGeneration += 1
            $0.objects[name] = StoredObject(bytes: bytes, generation: $0.nextGeneration)
            if $0.commitThenFail {
                $0.commitThenFail = false
                throw ObjectStorageError.preconditionFailed(name)
            }
            return $0.nextGeneration
        }
    }

    package func delete(_ name: String, ifGenerationMatch: Int64?) async throws {
        try bucket.withLock {
            guard let object = $0.objects[name] else { throw ObjectStorageError.notFound(name) }
            if let condition = ifGenerationMatch, object.generation != condition { throw ObjectStorageError.preconditionFailed(name) }
            $0.objects[name] = nil
        }
    }

    package func list(prefix: String) async throws -> [String] {
        bucket.withLock { $0.objects.keys.filter { $0.hasPrefix(prefix) }.sorted() }
    }

    /// The bytes of `name`, read synchronously (tests).
    package func bytes(of name: String) -> [UInt8]? { bucket.withLock { $0.objects[name]?.bytes } }

    /// The objects under `prefix` joined in name order (tests).
    package func joined(prefix: String) -> [UInt8] {
        bucket.withLock { bucket in
            bucket.objects.keys.filter { $0.hasPrefix(prefix) }.sorted().flatMap { bucket.objects[$0]!.bytes }
        }
    }
}
