import FleetAuthCore

/// A count that any thread may raise: for events counted from an observer closure.
package final class Counter: Sendable {
    private let count = LockedState(0)

    package init() {}

    /// Adds one.
    package func increment() { count.withLock { $0 += 1 } }

    /// The count so far.
    package var value: Int { count.withLock { $0 } }
}
