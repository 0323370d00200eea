import FCMBuildInfo
import Foundation

/// The store (and the emulator's clock) on disk, in the export format of `StateExport`: `--state-file` (loaded
/// at start, saved every second while it changes and once more at shutdown), `--import DIR` and
/// `--export-on-exit DIR`. Written to a temporary file and renamed, so a crash never leaves half a file.
enum StatePersistence {
    static var exportedBy: String { BuildInfo.summary("fcm-emulator") }

    /// The export of everything the emulator holds now.
    static func export(_ services: EmulatorServices) async -> Data {
        let snapshot = await services.store.snapshot()
        let clock = await services.calendar.clock
        return StateExport.document(snapshot, clock: clock, exportedBy: exportedBy)
    }

    /// Replaces the emulator's state with an export's (`replacingSenders`: an import names every sender link;
    /// a state file loaded at start merges with none).
    static func restore(_ contents: StateExport.Contents, into services: EmulatorServices, replacingSenders: Bool) async {
        await services.store.restore(contents.snapshot, replacingSenders: replacingSenders)
        if let clock = contents.clock { await services.calendar.set(now: clock.now, newProject: clock.newProject) }
    }

    /// `--state-file`: a missing file is an empty emulator.
    static func load(stateFile path: String, into services: EmulatorServices) async throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            await restore(try StateExport.read(try Data(contentsOf: URL(fileURLWithPath: path))), into: services, replacingSenders: false)
        } catch {
            throw EmulatorSetupError("--state-file \(path): \(error); move it aside to start empty")
        }
    }

    /// `--import DIR`: the directory must hold an export, as a mistyped path should not start an empty emulator.
    static func load(importDirectory directory: String, into services: EmulatorServices) async throws {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(StateExport.fileName).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw EmulatorSetupError(
                "--import \(directory): no \(StateExport.fileName) there (written by --export-on-exit or GET /emulator/v1/export)")
        }
        do {
            await restore(try StateExport.read(try Data(contentsOf: URL(fileURLWithPath: path))), into: services, replacingSenders: true)
        } catch {
            throw EmulatorSetupError("--import \(path): \(error)")
        }
    }

    static func save(_ services: EmulatorServices, to path: String) async throws {
        try write(await export(services), to: path, flag: "--state-file")
    }

    /// `--export-on-exit DIR`: creates DIR when missing.
    static func export(_ services: EmulatorServices, toDirectory directory: String) async throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw EmulatorSetupError("--export-on-exit \(directory): cannot create the directory: \(error)")
        }
        let path = URL(fileURLWithPath: directory).appendingPathComponent(StateExport.fileName).path
        try write(await export(services), to: path, flag: "--export-on-exit")
    }

    static func write(_ data: Data, to path: String, flag: String) throws {
        let temporary = path + ".tmp"
        do {
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw EmulatorSetupError("\(flag) \(path): cannot write: \(error)")
        }
        guard rename(temporary, path) == 0 else {
            throw EmulatorSetupError("\(flag) \(path): cannot replace: \(String(cString: strerror(errno)))")
        }
    }

    /// Saves whenever the store changed, until cancelled.
    static func autosave(_ services: EmulatorServices, to path: String, logger: @escaping @Sendable (String) -> Void) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            if await services.store.dirty {
                do { try await save(services, to: path) } catch { logger("\(error)") }
            }
        }
    }
}
