import Foundation

#if os(Linux) || os(Android) || os(Windows) || os(FreeBSD)
    import Synchronization
#endif

/// A value guarded by a lock, shared by FleetAuth's own modules.
///
/// Where `Synchronization.Mutex` has no OS-version floor (Linux and the other non-Apple
/// systems) it is that: a futex-based lock stored inline. On Apple systems `Mutex` needs
/// iOS 18 and macOS 15 while the SDK supports older ones, so there it wraps `NSLock`.
#if os(Linux) || os(Android) || os(Windows) || os(FreeBSD)
    package final class LockedState<State>: Sendable {
        private let mutex: Mutex<Unprotected>

        /// Lets a `State` that is not itself `Sendable` live in the `Mutex`.
        private struct Unprotected: @unchecked Sendable {
            // Safe because the value is only reached through `mutex.withLock`, which gives
            // one thread at a time exclusive access, and the initializer requires
            // `State: Sendable` for anything that crosses threads.
            var state: State
        }

        /// Creates the box with its first value.
        package init(_ initialState: State) where State: Sendable {
            mutex = Mutex(Unprotected(state: initialState))
        }

        /// Runs `body` with exclusive access to the state. Never call back into user code
        /// (completions, observers) from inside `body`.
        @inline(__always)
        package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            try mutex.withLock { (box: inout Unprotected) throws -> Unchecked<Result> in
                Unchecked(value: try body(&box.state))
            }.value
        }

        /// Carries a result out of the lock; the caller owns it from then on.
        private struct Unchecked<Value>: @unchecked Sendable {
            // Safe because the value is handed from the closure, which ran under the lock,
            // to the one caller that asked for it; nothing else holds it.
            let value: Value
        }
    }
#else
    package final class LockedState<State>: @unchecked Sendable {
        // Safe because `state` is only ever read or written inside `withLock`, which holds
        // `lock` for the whole access, so no two threads touch it at once. `State` values
        // never escape the closure by reference unless the caller copies them out, and the
        // initializer requires `State: Sendable` for anything that crosses threads.
        private let lock = NSLock()
        private var state: State

        /// Creates the box with its first value.
        package init(_ initialState: State) where State: Sendable {
            self.state = initialState
        }

        /// Runs `body` with exclusive access to the state. Never call back into user code
        /// (completions, observers) from inside `body`.
        @inline(__always)
        package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            lock.lock()
            defer { lock.unlock() }
            return try body(&state)
        }
    }
#endif
