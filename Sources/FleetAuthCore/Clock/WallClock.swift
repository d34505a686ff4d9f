public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The source of wall-clock time for FleetAuth.
///
/// JWT `exp` and `iat` are wall time, so the SDK reads time through this protocol
/// rather than `Swift.Clock`. Production code uses ``SystemWallClock``; tests inject a
/// manual clock (`ManualWallClock` in `FleetAuthInMemory`) and advance it by hand.
///
/// ```swift
/// struct FixedOffsetClock: WallClock {
///     var offset: TimeInterval
///     func now() -> Date { Date().addingTimeInterval(offset) }
///     func sleep(for duration: TimeInterval) async throws {
///         try await SystemWallClock().sleep(for: duration)
///     }
/// }
/// ```
public protocol WallClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
    /// Suspends for `duration` seconds of this clock's time; throws `CancellationError`
    /// if the calling task is cancelled first.
    func sleep(for duration: TimeInterval) async throws
}

/// The device's real clock.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// The current time of the system's real-time clock. On Linux this is the coarse
    /// clock (a few milliseconds of resolution, a fifth of the cost): ample for expiry
    /// decisions measured in minutes, and it is read on every token lookup.
    public func now() -> Date {
        var spec = timespec()
        #if os(Linux)
            let clockID = CLOCK_REALTIME_COARSE
        #else
            let clockID = CLOCK_REALTIME
        #endif
        guard clock_gettime(clockID, &spec) == 0 else { return Date() }
        return Date(timeIntervalSince1970: TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1e9)
    }

    /// Sleeps with `Task.sleep`; a non-positive duration returns at once.
    public func sleep(for duration: TimeInterval) async throws {
        guard duration > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(nanoseconds: UInt64(min(duration, 1e9) * 1_000_000_000))
    }
}
