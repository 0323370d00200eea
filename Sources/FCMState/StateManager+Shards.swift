import FCMCore

/// The sharded layout (ShardIndex, StateShards) under the state manager: writing a ledger as a single document
/// or as shards plus an index, and reading the shards an index names.
extension StateManager {
    /// The state object's own name (`state.json`), which shard names start with.
    var stateName: String { layout.state.split(separator: "/").last.map(String.init) ?? layout.state }

    /// Where names in an index are relative to: the state object's folder in the medium.
    func shardObject(_ relative: String) -> String {
        String(layout.state.dropLast(stateName.count)) + relative
    }

    /// How many shard objects are written at once: a bucket answers each in tens of milliseconds, and a state
    /// first written sharded has hundreds of them. A directory gains nothing: each of its writes takes the
    /// directory's flock.
    var shardWindow: Int { layout.medium == .bucket ? 16 : 1 }

    /// Shards read at once, on every medium: reads take no lock, and their decoding uses every core.
    static let readWindow = 16

    /// What a write of the state did: the generation of the object the next write is conditional on, and the
    /// shard objects the replaced index named that the new one does not (to remove once the write is recorded).
    struct PutState {
        var generation: Int64
        var obsolete: [String]
    }

    /// Writes `ledger` as one document or as shards and an index (ShardPolicy), the index (or document) by a
    /// compare-and-swap on `condition`. `current`: the stored object if the caller read it already, or nil to
    /// read it here when something may be stored. Shards whose bytes the replaced index already names are not
    /// written again, unless `force` (a state pushed over a damaged one must not lean on its shards).
    func putState(
        _ ledger: Ledger, mergedRuns: Set<String>, condition: Int64, current: StoredObject??, force: Bool
    ) async throws -> PutState {
        var stored: StoredObject?
        if let current {
            stored = current
        } else if condition != 0 {
            stored = try await storage.get(layout.state)
        }
        let old = stored.flatMap { object in
            ShardIndex.isIndex(object.bytes) ? try? ShardIndex.decode(object.bytes, source: statePath, stateName: stateName) : nil
        }
        let oldObjects = old.map { Set($0.shards.map(\.object)) } ?? []
        // The whole digest, not only the prefix a name carries, says whether a shard is already stored.
        let storedDigests = Dictionary(old?.shards.map { ($0.object, $0.sha256) } ?? [], uniquingKeysWith: { first, _ in first })
        if let slice = ledger.slice {
            return try await putSlice(ledger, slice: slice, old: old, oldObjects: oldObjects, mergedRuns: mergedRuns, condition: condition)
        }
        var bits = old?.bits ?? policy.estimatedBits(for: ledger)
        let names = ShardNames.numbering(for: ledger, keeping: old?.names)
        var encoded = encode(ledger, bits: bits, names: names, mergedRuns: mergedRuns, storedDigests: storedDigests, force: force)
        if !policy.keeps(bits: bits, total: encoded.total) {
            let better = policy.bits(forTotal: encoded.total)
            if better != bits {
                bits = better
                encoded = Encoded()  // the first cut's shards, freed before the second is made
                encoded = encode(ledger, bits: bits, names: names, mergedRuns: mergedRuns, storedDigests: storedDigests, force: force)
            }
        }
        if let document = encoded.document {
            let generation = try await storage.put(layout.state, document, ifGenerationMatch: condition)
            return PutState(generation: generation, obsolete: oldObjects.sorted())
        }
        let entries = encoded.entries
        let puts = encoded.puts
        try await putShards(puts)
        let index = ShardIndex(
            lineage: ledger.lineage, serial: ledger.serial, project: ledger.project, mergedRuns: mergedRuns, shards: entries, names: names)
        let generation = try await storage.put(layout.state, index.encode(), ifGenerationMatch: condition)
        let kept = Set(entries.map(\.object))
        return PutState(generation: generation, obsolete: oldObjects.subtracting(kept).sorted())
    }

    /// A ledger that holds some shards of the state (`Ledger.slice`): those shards are encoded again and the
    /// others kept as the replaced index names them, under its cut and with every name it numbers (an unread
    /// shard refers to them by number). The replaced index must be the one the slice was read from: the
    /// compare-and-swap on `condition` says so, and an index cut otherwise is refused here before anything is put.
    func putSlice(
        _ ledger: Ledger, slice: LedgerSlice, old: ShardIndex?, oldObjects: Set<String>, mergedRuns: Set<String>, condition: Int64
    ) async throws -> PutState {
        guard let old, old.bits == slice.bits, old.lineage == ledger.lineage else {
            throw StateConflictError("\(statePath) was replaced since its shards were read: this run holds only some of them")
        }
        let names = ShardNames.numbering(for: ledger, keeping: old.names, keepingAll: true)
        var buckets = ShardBuckets(ledger, bits: slice.bits)
        let numbers = names.numbers
        var entries = old.shards
        var puts: [(String, [UInt8])] = []
        for number in slice.loaded.sorted() where number < entries.count {
            let (entry, bytes) = shardEntry(buckets.part(number), number: number, numbers: numbers, trusted: ledger.declarationsTrusted)
            buckets.release(number)
            entries[number] = entry
            // The whole digest, not only the prefix a name carries, says whether a shard is already stored.
            let stored = old.shards[number]
            if stored.object != entry.object || stored.sha256 != entry.sha256 { puts.append((shardObject(entry.object), bytes)) }
        }
        try await putShards(puts)
        let index = ShardIndex(
            lineage: ledger.lineage, serial: ledger.serial, project: ledger.project, mergedRuns: mergedRuns, shards: entries, names: names)
        let generation = try await storage.put(layout.state, index.encode(), ifGenerationMatch: condition)
        return PutState(generation: generation, obsolete: oldObjects.subtracting(entries.map(\.object)).sorted())
    }

    /// Puts shard objects, `shardWindow` at once (each is new: its name carries its digest).
    func putShards(_ puts: [(String, [UInt8])]) async throws {
        let storage = self.storage
        try await Self.concurrently(puts, width: shardWindow) { put in
            _ = try await storage.put(put.0, put.1, ifGenerationMatch: nil)
        } collect: { _ in
        }
    }

    /// Shard `number`'s fragment encoded, with its index entry; its digest only if `trusted`
    /// (`Ledger.declarationsTrusted`).
    func shardEntry(_ part: Ledger, number: Int, numbers: ShardNames.Numbers, trusted: Bool) -> (ShardIndex.Entry, [UInt8]) {
        let bytes = ShardEncoder.encode(part, numbers: numbers)
        let digest = ShardIndex.sha256(bytes)
        let entry = ShardIndex.Entry(
            object: ShardIndex.objectName(stateName: stateName, index: number, digest: digest), sha256: digest, bytes: bytes.count,
            declared: trusted ? ShardDigests.recorded(part) : nil)
        return (entry, bytes)
    }

    /// A state encoded for a write: the single document, or the index's entries and the shards to put.
    struct Encoded {
        var document: [UInt8]?
        var entries: [ShardIndex.Entry] = []
        /// (object, bytes) of the shards the replaced index does not already name.
        var puts: [(String, [UInt8])] = []
        /// What the records take, without what every fragment repeats (its head): else a state cut into many
        /// shards would look bigger than it is, and be cut into more.
        var total = 0
    }

    /// With no bits, the single document of the whole ledger; else the fragments, made, hashed and (when the
    /// store holds them already) dropped one at a time: at ten million registrations the whole encoded state is
    /// gigabytes, and a write of a small change puts a few shards of it.
    func encode(
        _ ledger: Ledger, bits: Int, names: ShardNames, mergedRuns: Set<String>, storedDigests: [String: String], force: Bool
    ) -> Encoded {
        guard bits > 0 else {
            let document = StateFileFormat.encode(ledger, mergedRuns: mergedRuns)
            return Encoded(document: document, total: document.count)
        }
        var buckets = ShardBuckets(ledger, bits: bits)
        let numbers = names.numbers
        let overhead = ShardEncoder.encode(Ledger(lineage: ledger.lineage, serial: 0), numbers: numbers).count
        var encoded = Encoded()
        encoded.entries.reserveCapacity(buckets.count)
        for number in 0..<buckets.count {
            let (entry, bytes) = shardEntry(buckets.part(number), number: number, numbers: numbers, trusted: ledger.declarationsTrusted)
            buckets.release(number)
            encoded.total += max(0, bytes.count - overhead)
            encoded.entries.append(entry)
            if force || storedDigests[entry.object] != entry.sha256 { encoded.puts.append((shardObject(entry.object), bytes)) }
        }
        return encoded
    }

    /// Removes shard objects no index names any longer. Best effort: one left behind is garbage, never a hole
    /// (the index that named it is gone).
    func removeObsolete(_ objects: [String]) async {
        for relative in objects {
            do {
                try await storage.delete(shardObject(relative), ifGenerationMatch: nil)
            } catch ObjectStorageError.notFound {
                continue
            } catch {
                warn("\(layout.locate(shardObject(relative))): could not remove a shard no longer used (\(error)); it is only garbage")
            }
        }
    }

    /// A shard the index names is gone; checked against the index again before it is called damage.
    struct MissingShard: Error {
        var object: String
    }

    /// The ledger an index names, every shard checked against its SHA-256 and size. A shard that is missing
    /// while the index has moved on (a writer replaced it and removed the old shards after this read began)
    /// is a conflict, so the read is made again; missing under the same index, it is lost, and said so.
    func loadShards(_ index: ShardIndex, indexGeneration: Int64, only: Set<Int>? = nil) async throws -> Ledger {
        var ledger = Ledger(lineage: index.lineage, serial: index.serial)
        ledger.project = index.project
        // Digests were recorded only from declarations known to account for every subscription.
        ledger.declarationsTrusted = index.shards.contains { $0.declared != nil }
        let storage = self.storage
        let layout = self.layout
        let prefix = String(layout.state.dropLast(stateName.count))
        do {
            let entries = only.map { only in index.shards.indices.filter(only.contains).map { index.shards[$0] } } ?? index.shards
            try await Self.concurrently(entries, width: Self.readWindow) { entry -> Ledger in
                let name = prefix + entry.object
                let shown = layout.locate(name)
                guard let object = try await storage.get(name) else { throw MissingShard(object: shown) }
                guard object.bytes.count == entry.bytes, ShardIndex.sha256(object.bytes) == entry.sha256 else {
                    throw StateError(
                        "\(shown): this shard of the state does not match its SHA-256 and size in the index \(layout.locate(layout.state)): "
                            + "it was damaged or edited. \(StateVersionRules.wayOut)")
                }
                return try ShardDecoder.decode(object.bytes, names: index.names, lineage: index.lineage, source: shown)
            } collect: { part in
                StateShards.merge(part, into: &ledger)
            }
        } catch let missing as MissingShard {
            let now = try await attempt("reading the state") { try await storage.get(layout.state) }
            if now?.generation != indexGeneration {
                throw StateConflictError("\(statePath) was replaced while it was read")
            }
            throw StateError(
                "\(missing.object): this shard of the state, named by its index \(statePath), is missing: the state cannot be read "
                    + "without it, and reading it as empty would forget its records. Restore the object (a GCS bucket with versioning "
                    + "keeps deleted ones), or put back the state you mean with `fcmctl state push --force FILE`")
        } catch ObjectStorageError.failed(let message) {
            throw StateError(
                "\(displayName): reading the state's shards failed: \(message). Check the bucket exists and the credentials may "
                    + "storage.objects.get/create/delete/list on it")
        }
        return ledger
    }

    /// Runs `body` over `items`, at most `width` at once, handing each result to `collect` as it comes.
    static func concurrently<Item: Sendable, Result: Sendable>(
        _ items: [Item], width: Int, _ body: @escaping @Sendable (Item) async throws -> Result, collect: (Result) throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Result.self) { group in
            var next = 0
            while next < min(width, items.count) {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
            while let result = try await group.next() {
                try collect(result)
                if next < items.count {
                    let item = items[next]
                    group.addTask { try await body(item) }
                    next += 1
                }
            }
        }
    }
}
