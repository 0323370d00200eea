import Synchronization

/// Each registration's fingerprint key (`AppliedDeclarations.fnv` of its text), kept once computed: a plan and
/// an apply ask for it up to four times per registration (the declarations, the shard it lives in, its line in
/// the shard, the shard digests), and each time meant unpacking the text and hashing it byte by byte.
///
/// Chunks of 65,536 keys (512 KiB) are made as registrations in them first ask, so a run that never asks
/// (`validate`) holds none; ten million registrations hold 80 MB. Keys are atomics: parallel readers may compute
/// one at the same time, and store the same value.
final class FingerprintMemo: @unchecked Sendable {
    static let chunkShift = 16
    static let chunkSize = 1 << chunkShift
    /// 2^28 registrations; past them keys are computed every time.
    static let chunkCount = 4096

    static let shared = FingerprintMemo()

    private let directory: UnsafeMutablePointer<Atomic<UnsafeMutablePointer<Atomic<UInt64>>?>>
    private let making = Mutex(())

    init() {
        directory = .allocate(capacity: Self.chunkCount)
        for index in 0..<Self.chunkCount { (directory + index).initialize(to: Atomic(nil)) }
    }

    deinit {
        for index in 0..<Self.chunkCount {
            guard let chunk = directory[index].load(ordering: .acquiring) else { continue }
            chunk.deinitialize(count: Self.chunkSize)
            chunk.deallocate()
        }
        directory.deinitialize(count: Self.chunkCount)
        directory.deallocate()
    }

    /// The key of the registration numbered `ordinal`; `compute` runs when none is kept (0 is never kept, so a key
    /// that happens to be 0 is computed each time).
    func key(_ ordinal: UInt32, compute: () -> UInt64) -> UInt64 {
        let index = Int(ordinal >> UInt32(Self.chunkShift))
        guard index < Self.chunkCount else { return compute() }
        let chunk = directory[index].load(ordering: .acquiring) ?? makeChunk(index)
        let slot = chunk + Int(ordinal & UInt32(Self.chunkSize - 1))
        let known = slot.pointee.load(ordering: .relaxed)
        if known != 0 { return known }
        let value = compute()
        slot.pointee.store(value, ordering: .relaxed)
        return value
    }

    private func makeChunk(_ index: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        making.withLock { _ in
            if let made = directory[index].load(ordering: .acquiring) { return made }
            let chunk = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: Self.chunkSize)
            for offset in 0..<Self.chunkSize { (chunk + offset).initialize(to: Atomic(0)) }
            directory[index].store(chunk, ordering: .releasing)
            return chunk
        }
    }
}
