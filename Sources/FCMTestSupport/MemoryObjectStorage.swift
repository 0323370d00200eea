import FCMCore
import Foundation

/// A bucket in memory with GCS's generation rules (every write a new generation; conditions on create,
/// update and delete), for unit tests of the gcs state store. `commitThenFail` makes the next write take
/// effect and then report a 412, as a create retried after a lost reply sees.
package final class MemoryObjectStorage: ObjectStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [String: StoredObject] = [:]
    private var nextGeneration: Int64 = 1_000
    package var commitThenFail = false

    package init() {}

    package var displayName: String { "gs://memory" }

    package func get(_ name: String) async throws -> StoredObject? { lock.withLock { objects[name] } }

    package func put(_ name: String, _ bytes: [UInt8], ifGenerationMatch: Int64?) async throws -> Int64 {
        try lock.withLock {
            if let condition = ifGenerationMatch, (objects[name]?.generation ?? 0) != condition {
                throw ObjectStorageError.preconditionFailed(name)
            }
            nextGeneration += 1
            objects[name] = StoredObject(bytes: bytes, generation: nextGeneration)
            if commitThenFail {
                commitThenFail = false
                throw ObjectStorageError.preconditionFailed(name)
            }
            return nextGeneration
        }
    }

    package func delete(_ name: String, ifGenerationMatch: Int64?) async throws {
        try lock.withLock {
            guard let object = objects[name] else { throw ObjectStorageError.notFound(name) }
            if let condition = ifGenerationMatch, object.generation != condition { throw ObjectStorageError.preconditionFailed(name) }
            objects[name] = nil
        }
    }

    package func list(prefix: String) async throws -> [String] { lock.withLock { objects.keys.filter { $0.hasPrefix(prefix) }.sorted() } }
}
