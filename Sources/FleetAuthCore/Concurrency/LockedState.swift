import Foundation

/// A value guarded by a lock, shared by FleetAuth's own modules.
///
/// The value and its lock live in one allocation: with Foundation's `NSLock` a lock was
/// two more (the lock object and, on Linux, its mutex), and a simulator touches each
/// vehicle's locks at every update, from memory that other vehicles' updates have pushed
/// out of the processor's caches since.
package struct LockedState<State>: @unchecked Sendable, CustomReflectable {
    // Safe because the state is only ever read or written inside `withLock`, which holds
    // the lock for the whole access, so no two threads touch it at once; the lock is made
    // in `Storage.make` before the storage is shared and destroyed in its `deinit` after
    // the last use. `init` requires `State: Sendable`, and values leave `withLock` only as
    // copies. (`ManagedBuffer` is never `Sendable` itself, hence the conformance here.)
    private let storage: Storage

    package init(_ initialState: State) where State: Sendable {
        storage = Storage.make(initialState)
    }

    /// No children: `dump` and debuggers must not read the state without the lock, nor
    /// show the tokens it may hold.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }

    /// Runs `body` with exclusive access to the state. Never call back into user code
    /// (completions, observers) from inside `body`.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { state, lock in
            POSIXMutex.lock(lock)
            defer { POSIXMutex.unlock(lock) }
            return try body(&state.pointee)
        }
    }

    /// The state (the buffer's header) and its lock (the one element after it).
    private final class Storage: ManagedBuffer<State, pthread_mutex_t> {
        static func make(_ state: State) -> Storage {
            let buffer = create(minimumCapacity: 1) { _ in state }
            buffer.withUnsafeMutablePointerToElements { POSIXMutex.initialize($0) }
            return unsafeDowncast(buffer, to: Storage.self)
        }

        deinit {
            withUnsafeMutablePointerToElements { POSIXMutex.destroy($0) }
        }
    }
}

/// A POSIX mutex (Foundation brings the POSIX API on every platform FleetAuth supports,
/// the same code on each), used in place: it must not move once made, which the element
/// storage of a `ManagedBuffer` guarantees.
enum POSIXMutex {
    static func initialize(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
    }

    static func destroy(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_destroy(lock)
        lock.deinitialize(count: 1)
    }

    static func lock(_ lock: UnsafeMutablePointer<pthread_mutex_t>) { pthread_mutex_lock(lock) }
    static func unlock(_ lock: UnsafeMutablePointer<pthread_mutex_t>) { pthread_mutex_unlock(lock) }
}
