import FCMCore
import FCMManifest

extension Session {
    /// Reads the state, saying what the read had to say (a replayed journal, a torn line).
    /// `selecting`: the shards of a sharded state to read (`StateStore.read(selecting:)`).
    package func readState(_ store: any StateStore, selecting: ShardSelector? = nil) async throws -> StateSnapshot {
        let snapshot: StateSnapshot
        do {
            snapshot = try await store.read(selecting: selecting)
        } catch {
            throw EngineFailure("\(error)")
        }
        for warning in snapshot.warnings { notices.warning(warning) }
        if snapshot.replayedEntries > 0 {
            notices(
                "Recovered \(snapshot.replayedEntries) journal record\(snapshot.replayedEntries == 1 ? "" : "s") of an interrupted run"
                    + (snapshot.pendingIntents > 0
                        ? "; \(snapshot.pendingIntents) operation\(snapshot.pendingIntents == 1 ? "" : "s") may have happened and will be checked against FCM."
                        : "."))
        }
        return snapshot
    }

    /// Refuses (exit `code`, 1 unless a saved plan's 5) a state of another project than this run's manifest,
    /// naming both and what to do. A state that records no project yet is bound by the run's next write;
    /// if it holds records, a warning says so, since nothing can tell whose they are.
    package func checkProject(
        _ snapshot: StateSnapshot, store: any StateStore, code: Int32 = ExitCodes.error, prefix: String = "", warn: Bool = true
    ) throws {
        guard let project else { return }
        if let reason = snapshot.ledger.project.refusal(manifest: project, state: store.displayName) {
            throw EngineFailure(prefix + reason, code: code)
        }
        if warn, snapshot.ledger.project.isEmpty, !project.isEmpty, !snapshot.ledger.isEmpty {
            notices.warning(
                "the state \(store.displayName) records no project (it was written before states were bound to one); its next "
                    + "write binds it to \(project.description). If another environment used this state too, give each its own before "
                    + "applying (docs/state.md, \"Bound to one project\")")
        }
    }

    /// Runs `body` holding the state lock (unless `lock` is false), and releases it however `body` ends.
    /// A lock held by another live run is exit 4, naming the holder.
    package func withStateLock<T>(
        _ store: any StateStore, operation: String, lock: Bool, timeout: Duration, _ body: (StateLock?) async throws -> T
    ) async throws -> T {
        guard lock else {
            if operation != "plan" {
                notices.warning("running \(operation) without the state lock (--lock=false): a concurrent run can lose records")
            }
            return try await body(nil)
        }
        let held: StateLock
        signals.acquiring(true)
        do {
            held = try await store.lock(operation: operation, timeout: timeout)
        } catch let error as StateLockedError {
            signals.acquiring(false)
            throw EngineFailure("\(error)", code: ExitCodes.stateLocked)
        } catch {
            signals.acquiring(false)
            throw EngineFailure("cannot take the state lock: \(error). Nothing was sent")
        }
        // A signal that ends the process before `body` does releases the lock on the way out.
        let token = signals.holding(held, store)
        signals.acquiring(false)
        if let signal = signals.receivedWhileIdle() {
            try? await store.unlock(held)
            signals.released(token)
            signals.exitInterrupted(signal)
        }
        fence.arm(held)
        defer { fence.disarm() }
        let result: T
        do {
            result = try await body(held)
        } catch {
            try? await store.unlock(held)
            signals.released(token)
            throw error
        }
        defer { signals.released(token) }
        do {
            try await store.unlock(held)
        } catch {
            notices.warning("could not release the state lock \(held.info.id): \(error). Remove it with: fcmctl state unlock \(held.info.id)")
        }
        return result
    }
}

extension Session {
    /// Reads the state for a plan from `declared`: with `--refresh=changed`, only the shards whose declarations
    /// changed since the last apply (ShardDigests). Returns the snapshot and the manifests' declarations cut to
    /// what was read, with the number of declared registrations left out (known unchanged, not looked at).
    /// Deferred device names (`DesiredState.namesDeferred`) are named from `manifest`, for the registrations read.
    package func readState(
        _ store: any StateStore, for declared: DesiredState, mode: RefreshMode, manifest: Manifest?
    ) async throws -> (snapshot: StateSnapshot, desired: DesiredState, leftOut: Int) {
        let declaredShards = DeclaredShardsBox()
        let snapshot = try await readState(store, selecting: mode == .changed ? declaredShards.selector(for: declared) : nil)
        guard let slice = snapshot.ledger.slice else { return (snapshot, try Self.named(declared, from: manifest) { _ in true }, 0) }
        guard let shards = declaredShards.shards, shards.bits == slice.bits else {
            throw EngineFailure("the state was read in part without the declarations it was chosen by; run again")
        }
        let leftOut = shards.declaredOutside(slice)
        notices(
            "Read \(plural(slice.loaded.count, "shard")) of the state's \(1 << slice.bits): the rest hold \(plural(leftOut, "registration")) "
                + "declared as the last apply left them (--refresh=changed).")
        return (snapshot, try Self.named(shards.slice(declared, to: slice), from: manifest, where: shards.records(in: slice)), leftOut)
    }

    /// `desired` with its deferred device names filled in from `manifest`, for the registrations `keep` accepts.
    package static func named(_ desired: DesiredState, from manifest: Manifest?, where keep: (Registration) -> Bool) throws -> DesiredState {
        guard desired.namesDeferred else { return desired }
        guard let manifest else { throw EngineFailure("the manifests' device names were not read; run again") }
        var named = desired
        named.deviceNames = manifest.deviceNames(where: keep)
        named.namesDeferred = false
        return named
    }

    /// Every state write a run makes: `ledger` bound to this run's project (a state written by the run is its
    /// project's), as the serial after the one read, over `version` (compare-and-swap). Returns the new version.
    package func commit(_ ledger: inout Ledger, to store: any StateStore, replacing version: StateVersion?) async throws -> StateVersion {
        if let project { ledger.bind(to: project) }
        ledger.serial = try ledger.nextSerial()
        return try await store.write(ledger, replacing: version)
    }
}
