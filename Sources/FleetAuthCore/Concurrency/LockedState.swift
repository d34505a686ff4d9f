import CFleetAuthAtomics
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
/// The lock is ``PlatformLock``: `os_unfair_lock` on Apple systems, a futex word on Linux.
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

/// The platform's lock primitive at a stable address, as it requires: `os_unfair_lock` on
/// Apple systems; on Linux a futex word (`fleetauth_lock`: one compare-and-swap to take
/// it free, an exchange to release it, a short spin and then the kernel only when it is
/// held), which costs about 50 instructions less per lock and release than glibc's mutex on
/// the lookup path; a `pthread_mutex_t` elsewhere. (`Synchronization.Mutex` needs iOS 18
/// and macOS 15, and on Linux its atomics are invisible to the thread sanitizer CI runs;
/// the futex word's are C11 builtins it sees.)
package struct PlatformLock: ~Copyable, @unchecked Sendable {
    // Safe because the primitive is only touched through the platform's lock and unlock
    // calls (for the futex word, atomic operations), which are thread-safe by definition;
    // the pointer is never exposed.
    #if canImport(Darwin)
        private let primitive: UnsafeMutablePointer<os_unfair_lock>
    #elseif os(Linux)
        private let primitive: UnsafeMutablePointer<UInt32>
    #else
        private let primitive: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// Creates an unlocked lock.
    package init() {
        primitive = .allocate(capacity: 1)
        #if canImport(Darwin)
            primitive.initialize(to: os_unfair_lock())
        #elseif os(Linux)
            primitive.initialize(to: 0)
        #else
            primitive.initialize(to: pthread_mutex_t())
            pthread_mutex_init(primitive, nil)
        #endif
    }

    deinit {
        #if !canImport(Darwin) && !os(Linux)
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
        #elseif os(Linux)
            fleetauth_lock(primitive)
        #else
            pthread_mutex_lock(primitive)
        #endif
    }

    /// Releases the lock.
    @inline(__always)
    package func unlock() {
        #if canImport(Darwin)
            os_unfair_lock_unlock(primitive)
        #elseif os(Linux)
            fleetauth_unlock(primitive)
        #else
            pthread_mutex_unlock(primitive)
        #endif
    }
}
