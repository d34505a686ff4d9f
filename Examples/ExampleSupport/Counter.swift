import Foundation

/// A thread-safe counter for tallying events from any thread.
public final class Counter: @unchecked Sendable {
    // Safe because `value` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var value = 0

    /// A counter at zero.
    public init() {}

    /// Adds one.
    public func increment() { lock.withLock { value += 1 } }
    /// The count so far.
    public var count: Int { lock.withLock { value } }
}
