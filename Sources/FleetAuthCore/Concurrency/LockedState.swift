import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a lock, shared by FleetAuth's own modules.
///
/// The lock is the platform's own primitive, called directly: `os_unfair_lock` on Apple
/// systems and a `pthread_mutex_t` elsewhere (adaptive on Linux: it spins before it sleeps). (`Synchronization.Mutex` needs iOS 18 and
/// macOS 15, and on Linux its futex is invisible to the thread sanitizer CI runs.)
package final class LockedState<State>: @unchecked Sendable, CustomReflectable {
    // Safe because `state` is only ever read or written inside `withLock`, which holds
    // `lock` for the whole access, so no two threads touch it at once. `State` values
    // never escape the closure by reference unless the caller copies them out, and the
    // initializer requires `State: Sendable` for anything that crosses threads.
    private let lock = PlatformLock()
    /// The state at a fixed address: reached through a pointer, an access needs no dynamic
    /// exclusivity check (the lock already makes it exclusive).
    private let state: UnsafeMutablePointer<State>

    /// Creates the box with its first value.
    package init(_ initialState: State) where State: Sendable {
        state = UnsafeMutablePointer.allocate(capacity: 1)
        state.initialize(to: initialState)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// No children: `dump` and debuggers must not read the state without the lock, nor
    /// show the tokens it may hold.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }

    /// Runs `body` with exclusive access to the state. Never call back into user code
    /// (completions, observers) from inside `body`.
    @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state.pointee)
    }
}

/// The platform's lock primitive at a stable address, as it requires.
package struct PlatformLock: ~Copyable, @unchecked Sendable {
    // Safe because the primitive is only touched through the platform's lock and unlock
    // calls, which are thread-safe by definition; the pointer is never exposed.
    #if canImport(Darwin)
        private let primitive: UnsafeMutablePointer<os_unfair_lock>
    #else
        private let primitive: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// Creates an unlocked lock.
    package init() {
        primitive = .allocate(capacity: 1)
        #if canImport(Darwin)
            primitive.initialize(to: os_unfair_lock())
        #else
            primitive.initialize(to: pthread_mutex_t())
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if os(Linux)
                // Spin briefly before sleeping: the sections guarded here are a few hundred
                // nanoseconds, far shorter than a trip through the kernel.
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            #endif
            pthread_mutex_init(primitive, &attributes)
            pthread_mutexattr_destroy(&attributes)
        #endif
    }

    deinit {
        #if !canImport(Darwin)
            pthread_mutex_destroy(primitive)
        #endif
        primitive.deinitialize(count: 1)
        primitive.deallocate()
    }

    /// Waits for and takes the lock.
    @inline(__always)
    package func lock() {
        #if canImport(Darwin)
            os_unfair_lock_lock(primitive)
        #else
            pthread_mutex_lock(primitive)
        #endif
    }

    /// Releases the lock.
    @inline(__always)
    package func unlock() {
        #if canImport(Darwin)
            os_unfair_lock_unlock(primitive)
        #else
            pthread_mutex_unlock(primitive)
        #endif
    }
}
