import Foundation

/// A value guarded by a lock, shared by FleetAuth's own modules.
package final class LockedState<State>: @unchecked Sendable, CustomReflectable {
    // Safe because `state` is only ever read or written inside `withLock`, which holds `lock`
    // for the whole access, so no two threads touch it at once. The initializer requires
    // `State: Sendable`, and values leave the closure only as copies.
    private let lock = NSLock()
    /// Unchecked at run time: the lock is what makes each access exclusive. The runtime's own
    /// check cost 126 more instructions a lookup under callgrind (857 against 731: the
    /// lookup's 1.52 times the correct floor would be 1.78).
    @exclusivity(unchecked) private var state: State

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
