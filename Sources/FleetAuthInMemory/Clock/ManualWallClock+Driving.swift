import FleetAuthCore
public import Foundation

extension ManualWallClock {
    /// Runs `operation` to completion while moving the clock forward to every sleep
    /// deadline at most `horizon` seconds away (network latency, retry backoff), so
    /// simulations and tests need not advance the clock by hand. Sleeps further away
    /// (request timeouts) come due only if the operation itself waits that long.
    public func runToCompletion<T: Sendable>(
        horizon: TimeInterval = 1, _ operation: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error> {
        let finished = LockedState(false)
        let task = Task {
            defer { finished.withLock { $0 = true } }
            return try await operation()
        }
        while !finished.withLock({ $0 }) {
            if let next = nextDeadline, next.timeIntervalSince(now()) <= horizon { advance(to: next) }
            await Task.yield()
        }
        return await task.result
    }
}
