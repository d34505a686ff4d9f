public import FleetAuthInMemory
import Foundation

extension ManualWallClock {
    /// Runs `operation`, advancing the clock through the network latency it sleeps on,
    /// until it finishes. Sleeps more than a second away (request timeouts) are left alone.
    public func runToCompletion<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async
        -> Result<T, any Error>
    {
        let finished = Counter()
        let task = Task {
            defer { finished.increment() }
            return try await operation()
        }
        while finished.count == 0 {
            if let next = nextDeadline, next.timeIntervalSince(now()) <= 1 { advance(to: next) }
            await Task.yield()
        }
        return await task.result
    }
}
