import Foundation

/// A value behind a lock, for the benchmark's own counters and flags (the library's lock
/// type is not public).
public final class Locked<Value>: @unchecked Sendable {
    // Safe because `value` is only read or written inside `withLock`, which holds `lock`
    // for the whole access.
    private let lock = NSLock()
    private var value: Value

    /// Creates the lock around `value`.
    public init(_ value: Value) where Value: Sendable { self.value = value }

    /// Runs `body` with the value, under the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
