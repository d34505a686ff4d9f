public import Foundation

/// The source of time for FleetAuth: wall time, and a monotonic count that a user cannot
/// move.
///
/// JWT `exp` and `iat` are wall time, so wall time relates the server's `Date`, `iat` and
/// `exp` to the moment a token arrives. Everything after that — expiry, staleness,
/// cooldowns, retries and timeouts — runs on ``uptime()``, which keeps counting while the
/// device sleeps and does not move when someone sets the clock. Production code uses
/// the system clock (the default wherever a clock is asked for); tests inject a manual clock (`ManualWallClock` in
/// `FleetAuthInMemory`) and advance it by hand.
///
/// ```swift
/// import FleetAuthCore
/// import Foundation
///
/// struct FixedOffsetClock: WallClock {
///     var offset: TimeInterval
///     func now() -> Date { Date().addingTimeInterval(offset) }
///     func sleep(for duration: TimeInterval) async throws {
///         try await Task.sleep(nanoseconds: UInt64(max(0, duration) * 1e9))
///     }
/// }
/// ```
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
}

/// A clock that simulates time for tests: the manual test clock. It decides a timeout's
/// race itself, in deadline order, and it knows which of the engine's tasks are running,
/// so that a test can move time only once all of them are parked.
///
/// Work is counted in units: a unit is registered before its task starts
/// (``beginWork()``), runs while its task or the children it awaits run, is parked while
/// it sleeps on the clock or waits for another unit's result (``parkCurrentWork()``), and
/// ends with its task.
package protocol SimulatedClock: WallClock {
    /// Runs `operation`, giving up after `seconds` of this clock's time: its result, or
    /// `nil` when the time ran out first (the operation is then cancelled).
    func withTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result?
    /// Registers a unit of work that a new task is about to run, as running.
    func beginWork() -> UInt64
    /// Runs `body` as unit `unit`, which ends when it returns.
    func perform(_ unit: UInt64, _ body: @Sendable () async -> Void) async
    /// Marks the calling task's unit, if any, as parked on another unit's result; returns it.
    func parkCurrentWork() -> UInt64?
    /// Marks `unit` as running again: what it waited for is about to resume it.
    func resumeWork(_ unit: UInt64)
}

extension WallClock {
    /// Wall time as seconds since 1970: monotonic only while nobody sets the clock.
    public func uptime() -> TimeInterval { now().timeIntervalSince1970 }

    /// Runs `operation`, giving up after `seconds` of this clock's time: its result, or
    /// `nil` when the time ran out first (the operation is then cancelled). A clock that
    /// decides timeouts itself does so; any other races `operation` against
    /// ``sleep(for:)``, and the first to finish decides.
    package func withTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result? {
        if let deciding = self as? any SimulatedClock {
            return try await deciding.withTimeout(seconds, operation)
        }
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

    /// Registers work that ``startWork(_:_:)`` is about to start: a simulated clock counts
    /// it as running from now on. Returns its unit (`nil` on other clocks).
    package func countWork() -> UInt64? {
        (self as? any SimulatedClock)?.beginWork()
    }

    /// Starts `operation` in a new task as `unit` (from ``countWork()``).
    package func startWork(_ unit: UInt64?, _ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        guard let unit, let simulated = self as? any SimulatedClock else { return Task { await operation() } }
        return Task { await simulated.perform(unit, operation) }
    }

    /// Tells a simulated clock that the calling task now waits for other work's result;
    /// returns its unit, for ``unparkWork(_:)``.
    package func parkWork() -> UInt64? {
        (self as? any SimulatedClock)?.parkCurrentWork()
    }

    /// Tells a simulated clock that `unit` (from ``parkWork()``) runs again.
    package func unparkWork(_ unit: UInt64?) {
        guard let unit, let simulated = self as? any SimulatedClock else { return }
        simulated.resumeWork(unit)
    }
}

/// The device's real clock: what every provider, reporter and monitor uses unless given
/// another. Usable from inlinable code, since public initializers name it as their default.
///
/// Its uptime counts while the device sleeps, as the standard library's `ContinuousClock`
/// does (which reads `CLOCK_BOOTTIME` on Linux and `CLOCK_MONOTONIC_RAW` on Apple
/// systems). It reads the system's boot-time clock itself: turning a `ContinuousClock`
/// instant into seconds costs about 400 instructions, a quarter of a cached lookup.
@usableFromInline
package struct SystemWallClock: WallClock {
    /// Creates the system clock.
    @usableFromInline
    package init() {}

    /// The current time of the system's real-time clock.
    @usableFromInline
    package func now() -> Date { Date() }

    /// Seconds since boot, sleep included: `CLOCK_BOOTTIME` on Linux, `CLOCK_MONOTONIC`
    /// (which counts through sleep there) on Apple systems.
    @usableFromInline
    package func uptime() -> TimeInterval {
        var spec = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_BOOTTIME, &spec)
        #else
            clock_gettime(CLOCK_MONOTONIC, &spec)
        #endif
        return TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1e9
    }

    /// Sleeps on a dispatch timer that cancellation releases at once (``TimerSleep``); a
    /// non-positive duration returns at once.
    @usableFromInline
    package func sleep(for duration: TimeInterval) async throws {
        guard duration > 0 else { return try Task.checkCancellation() }
        try await TimerSleep.sleep(seconds: min(duration, 1e9))
    }
}
