import Foundation

/// A value guarded by Foundation's `NSLock` (the same code on every platform FleetAuth
/// supports), shared by FleetAuth's own modules.
package final class LockedState<State>: @unchecked Sendable, CustomReflectable {
    // Safe because `state` is only ever read or written inside `withLock`, which holds
    // `lock` for the whole access, so no two threads touch it at once. The initializer
    // requires `State: Sendable`, and values leave the closure only as copies.
    private let lock = NSLock()
    private var state: State

    package init(_ initialState: State) where State: Sendable {
        state = initialState
    }

    /// No children: `dump` and debuggers must not read the state without the lock, nor
    /// show the tokens it may hold.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }

    /// Runs `body` with exclusive access to the state. Never call back into user code
    /// (completions, observers) from inside `body`.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
