internal import CFleetAuthAtomics

/// One machine word that threads read and write without a lock, through C11 atomics.
///
/// Three uses in the lookup path: a cache slot's version, which its shard bumps under its
/// lock and other threads read to tell whether their copy of the slot still holds; a
/// thread's hit count, which only that thread writes and ``TokenEngine/statistics`` reads;
/// and where a shard's table keeps its records (``ScopeTable/location``), read before the
/// lock to prefetch one.
final class AtomicWord: @unchecked Sendable {
    // Safe because the word is only ever read and written through the atomic operations
    // below or the free functions that take its address, which the C memory model defines
    // for concurrent use; the address is fixed for the object's life, and whoever holds it
    // also holds the object.
    private let word: UnsafeMutablePointer<Int>

    /// The word's address, for a reader that keeps the object alive beside it and wants to
    /// skip the object on its hot path.
    var address: UnsafeMutablePointer<Int> { word }

    /// Creates a word holding `value`.
    init(_ value: Int = 0) {
        word = .allocate(capacity: 1)
        word.initialize(to: value)
    }

    deinit {
        word.deallocate()
    }

    /// Stores `value`, publishing every earlier write to acquiring readers.
    @inline(__always)
    func storeReleasing(_ value: Int) { fleetauth_store_release(word, value) }

    /// The value, unordered: for counters.
    @inline(__always)
    func loadRelaxed() -> Int { fleetauth_load_relaxed(word) }
}

/// Reads the word at `address`, with every write made before the store of the value read
/// visible. Lines read a slot's version this way, through the address they keep.
@inline(__always)
func fleetauthLoadAcquire(_ address: UnsafeMutablePointer<Int>) -> Int { fleetauth_load_acquire(address) }

/// Adds one to the word at `address` when the calling thread is its only writer: a load
/// and a store, no read-modify-write, so nothing is locked on the way.
@inline(__always)
func fleetauthIncrementBySoleWriter(_ address: UnsafeMutablePointer<Int>) {
    fleetauth_store_relaxed(address, fleetauth_load_relaxed(address) &+ 1)
}

/// Reads the word at `address` with no ordering.
@inline(__always)
func fleetauthLoadRelaxed(_ address: UnsafeMutablePointer<Int>) -> Int { fleetauth_load_relaxed(address) }

/// Starts loading the cache line at `address` (a hint: it never faults, whatever the address).
@inline(__always)
func fleetauthPrefetch(_ address: UnsafeRawPointer) { fleetauth_prefetch(address) }
