import Foundation

/// A value guarded by a lock, shared by FleetAuth's own modules.
///
/// `Synchronization.Mutex` would do the same job but needs iOS 18 and macOS 15; the SDK
/// supports older systems, so this wraps `NSLock`, which exists on every platform.
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
