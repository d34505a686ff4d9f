public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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

/// A clock that decides a timeout's race itself: the manual test clock, which settles it
/// in deadline order instead of by which task the executor runs first.
package protocol TimeoutDecidingClock: WallClock {
    /// Runs `operation`, giving up after `seconds` of this clock's time: its result, or
    /// `nil` when the time ran out first (the operation is then cancelled).
    func withTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result?
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
        if let deciding = self as? any TimeoutDecidingClock {
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
}

/// The device's real clock: what every provider, reporter and monitor uses unless given
/// another. Usable from inlinable code, since public initializers name it as their default.
@usableFromInline
package struct SystemWallClock: WallClock {
    /// Creates the system clock.
    @usableFromInline
    package init() {}

    /// The current time of the system's real-time clock. On Linux this is the coarse
    /// clock (a few milliseconds of resolution, a fifth of the cost): ample for expiry
    /// decisions measured in minutes, and it is read on every token lookup.
    @usableFromInline
    package func now() -> Date {
        var spec = timespec()
        #if os(Linux)
            let clockID = CLOCK_REALTIME_COARSE
        #else
            let clockID = CLOCK_REALTIME
        #endif
        guard clock_gettime(clockID, &spec) == 0 else { return Date() }
        return Date(timeIntervalSince1970: TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1e9)
    }

    /// Seconds since boot, sleep included: `CLOCK_BOOTTIME` on Linux, `CLOCK_MONOTONIC`
    /// (which counts through sleep there) on Apple systems.
    @usableFromInline
    package func uptime() -> TimeInterval {
        Self.uptime()
    }

    /// ``uptime()`` without an instance: the engine's lookup reads it directly when its
    /// clock is the system's, skipping the protocol's dynamic dispatch.
    @inline(__always)
    package static func uptime() -> TimeInterval {
        var spec = timespec()
        #if os(Linux)
            let clockID = CLOCK_BOOTTIME
        #else
            let clockID = CLOCK_MONOTONIC
        #endif
        guard clock_gettime(clockID, &spec) == 0 else { return ProcessInfo.processInfo.systemUptime }
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
