import Foundation

/// Counts the engine's running fetch tasks and wakes `waitUntilIdle()` callers when the
/// last one ends; and keeps the recent fetch durations that adaptive refresh windows use.
struct FlightTracker {
    /// Fetch tasks started and not yet finished.
    var running = 0
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// The last successful fetch durations, oldest overwritten first.
    private var durations: [TimeInterval] = []
    private var nextDuration = 0

    /// How many durations are kept; the slowest of them stands for the p99.
    static let durationWindow = 32

    /// Records a successful fetch's duration.
    mutating func recordFetch(duration: TimeInterval) {
        guard duration.isFinite, duration >= 0 else { return }
        if durations.count < Self.durationWindow {
            durations.append(duration)
        } else {
            durations[nextDuration] = duration
        }
        nextDuration = (nextDuration + 1) % Self.durationWindow
    }

    /// The slowest of the recent fetches (0 before the first).
    var slowestRecentFetch: TimeInterval { durations.max() ?? 0 }

    /// Marks a task finished and takes the idle waiters if it was the last.
    mutating func finish() -> [CheckedContinuation<Void, Never>] {
        running -= 1
        guard running == 0, !idleWaiters.isEmpty else { return [] }
        defer { idleWaiters.removeAll() }
        return idleWaiters
    }
}
