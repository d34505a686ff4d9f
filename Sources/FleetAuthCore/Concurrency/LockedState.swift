import Foundation

/// A value guarded by a POSIX mutex, shared by FleetAuth's own modules. Foundation brings the
/// POSIX API on every platform FleetAuth supports, so the code is the same on each.
///
/// The mutex is taken directly: with Foundation's `NSLock` a lock was one more object, and
/// a simulator touches each vehicle's locks at every update, from memory that other
/// vehicles' updates have pushed out of the processor's caches since.
package final class LockedState<State>: @unchecked Sendable, CustomReflectable {
    // Safe because `state` is only ever read or written inside `withLock`, which holds
    // `mutex` for the whole access, so no two threads touch it at once. The mutex is made in
    // `init`, before the object is shared, and destroyed in `deinit`, after its last use; it
    // lives in memory of its own, which does not move. The initializer requires
    // `State: Sendable`, and values leave the closure only as copies.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Unchecked at run time: the mutex is what makes each access exclusive, and the
    /// runtime's own check cost each lock two calls into it (a fleet simulator takes
    /// several locks an update).
    @exclusivity(unchecked) private var state: State

    package init(_ initialState: State) where State: Sendable {
        state = initialState
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// No children: `dump` and debuggers must not read the state without the lock, nor
    /// show the tokens it may hold.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }

    /// Runs `body` with exclusive access to the state. Never call back into user code
    /// (completions, observers) from inside `body`.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
