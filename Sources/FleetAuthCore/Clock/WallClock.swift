public import Foundation

/// The source of time for FleetAuth: wall time, and a monotonic count that a user cannot
/// move.
///
/// JWT `exp` and `iat` are wall time, so wall time relates the server's `Date`, `iat` and
/// `exp` to the moment a token arrives. Everything after that — expiry, staleness,
/// cooldowns, retries and timeouts — runs on ``uptime()``, which keeps counting while the
/// device sleeps and does not move when someone sets the clock. Production code uses
/// ``SystemWallClock`` (the default wherever a clock is asked for); tests inject a manual
/// clock (`ManualWallClock` in `FleetAuthInMemory`) and advance it by hand. A clock of your
/// own implements ``now()``, ``sleep(for:)`` and, to be monotonic, ``uptime()``.
public protocol WallClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
    /// Seconds on a monotonic clock that keeps counting while the device sleeps; only
    /// differences between two readings mean anything. The default reads ``now()``, which
    /// a clock change moves: implement it for a clock of your own.
    func uptime() -> TimeInterval
    /// Suspends for `duration` seconds of this clock's time; throws `CancellationError`
    /// if the calling task is cancelled first.
    func sleep(for duration: TimeInterval) async throws
    /// Runs `operation`, giving up after `seconds` of this clock's time: its result, or
    /// `nil` (and `operation` cancelled) when the time ran out first. The default races
    /// ``sleep(for:)``, or lets a manual clock decide; a clock that wraps another forwards
    /// to it, so that a manual clock's timeouts stay deterministic.
    func withTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result?
}

/// A clock that simulates time (the manual test clock): it decides timeouts itself, and counts
/// the SDK's work in units (registered before their task starts, parked while they sleep or
/// wait for another's result, ended with their task) so a test moves time only once all is parked.
package protocol SimulatedClock: WallClock {
    /// Registers a unit of work that a new task is about to run, as running.
    func beginWork() -> UInt64
    /// Runs `body` as unit `unit`, which ends when it returns.
    func perform(_ unit: UInt64, _ body: @Sendable () async -> Void) async
    /// Marks the calling task's unit, if any, as parked on another unit's result; returns it.
    func parkCurrentWork() -> UInt64?
    /// Marks `unit` as running again: what it waited for is about to resume it.
    func resumeWork(_ unit: UInt64)
    /// A draw in `0...1` from a fixed seed, for the SDK's jitter and refresh spread: a test
    /// on a simulated clock sees the same draws on every run.
    func randomUnit() -> Double
}

extension WallClock {
    /// Wall time as seconds since 1970: monotonic only while nobody sets the clock.
    public func uptime() -> TimeInterval { now().timeIntervalSince1970 }

    /// Runs `operation`, giving up after `seconds` of this clock's time: its result, or `nil`
    /// (and `operation` cancelled) when time ran out first.
    public func withTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result? {
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await sleep(for: seconds)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Registers work that ``startWork(_:_:)`` is about to start; its unit, on a simulated clock.
    package func countWork() -> UInt64? {
        (self as? any SimulatedClock)?.beginWork()
    }

    /// Starts `operation` in a new task as `unit` (from ``countWork()``).
    package func startWork(_ unit: UInt64?, _ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        guard let unit, let simulated = self as? any SimulatedClock else { return Task { await operation() } }
        return Task { await simulated.perform(unit, operation) }
    }

    /// Tells a simulated clock that the calling task waits for other work; its unit.
    package func parkWork() -> UInt64? {
        (self as? any SimulatedClock)?.parkCurrentWork()
    }

    /// Tells a simulated clock that `unit` (from ``parkWork()``) runs again.
    package func unparkWork(_ unit: UInt64?) {
        guard let unit, let simulated = self as? any SimulatedClock else { return }
        simulated.resumeWork(unit)
    }
}

/// The device's real clock: the default of every provider, reporter and monitor. Its uptime
/// counts time asleep, as `ContinuousClock` does; it reads the boot-time clock itself, since
/// turning a `ContinuousClock` instant into seconds costs a quarter of a cached lookup.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// The current time of the system's real-time clock.
    public func now() -> Date { Date() }

    /// Seconds since boot, sleep included: `CLOCK_BOOTTIME` on Linux, `CLOCK_MONOTONIC`
    /// (which counts through sleep there) on Apple systems.
    public func uptime() -> TimeInterval {
        var spec = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_BOOTTIME, &spec)
        #else
            clock_gettime(CLOCK_MONOTONIC, &spec)
        #endif
        return TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1e9
    }

    /// Sleeps on a dispatch timer that cancellation releases at once.
    public func sleep(for duration: TimeInterval) async throws {
        guard duration > 0 else { return try Task.checkCancellation() }
        try await TimerSleep.sleep(seconds: min(duration, 1e9))
    }
}
