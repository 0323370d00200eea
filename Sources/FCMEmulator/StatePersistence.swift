import Foundation

/// `--state-file`: the store as JSON, loaded at start, saved every second while it changes and once more
/// at shutdown. Written to a temporary file and renamed, so a crash never leaves half a file.
enum StatePersistence {
    static func load(_ path: String, into store: EmulatorStore) async throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            await store.restore(try decoder.decode(EmulatorStore.Snapshot.self, from: data))
        } catch {
            throw EmulatorSetupError("--state-file \(path): not an fcm-emulator state file (\(error)); move it aside to start empty")
        }
    }

    static func save(_ store: EmulatorStore, to path: String) async throws {
        let snapshot = await store.snapshot()
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(snapshot)
        let temporary = path + ".tmp"
        try data.write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else {
            throw EmulatorSetupError("--state-file \(path): cannot replace: \(String(cString: strerror(errno)))")
        }
    }

    /// Saves whenever the store changed, until cancelled.
    static func autosave(_ store: EmulatorStore, to path: String, logger: @escaping @Sendable (String) -> Void) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            if await store.dirty {
                do { try await save(store, to: path) } catch { logger("\(error)") }
            }
        }
    }
}
