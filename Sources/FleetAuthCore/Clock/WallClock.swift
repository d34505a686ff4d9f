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
/// own implements ``now()``, ``sleep(for:)`` and, to be monotonic, ``uptime()``. Do not wrap
/// the manual clock in a clock of your own: the SDK recognises it by its type to run its
/// tasks and timeouts where the manual clock can see them, and a wrapper hides that.
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

/// A clock that simulates time (the manual test clock). The engine asks it two things and
/// schedules nothing differently: where the tasks it starts run, so that the clock can tell
/// when all work has stopped, and its random draws, so that a test sees the same jitter on
/// every run.
package protocol SimulatedClock: WallClock {
    /// The executor that the tasks the SDK starts prefer: the clock's own, which counts the
    /// work queued on it.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    var taskExecutor: any TaskExecutor { get }
    /// A draw in `0...1` from a fixed seed, for the SDK's jitter and refresh spread: a test
    /// on a simulated clock sees the same draws on every run.
    func randomUnit() -> Double
    /// Runs `operation`, giving up after `seconds` of this clock's time, deciding deadline
    /// ties the simulated way: see ``WallClock/withTimeout(_:_:)``.
    func simulatedTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result?
}

extension WallClock {
    /// Wall time as seconds since 1970: monotonic only while nobody sets the clock.
    public func uptime() -> TimeInterval { now().timeIntervalSince1970 }

    /// Runs `operation`, giving up after `seconds` of this clock's time: its result, or `nil`
    /// (and `operation` cancelled) when time ran out first. A simulated clock decides; the
    /// system clock sets an alarm; any other races ``sleep(for:)`` in a task of its own.
    package func withTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result? {
        if let simulated = self as? any SimulatedClock {
            return try await simulated.simulatedTimeout(seconds, operation)
        }
        if let system = self as? SystemWallClock { return try await system.timeout(seconds, operation) }
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

    /// Starts `operation` in a new task: on a simulated clock's executor, so that the clock
    /// sees it run; else as `Task {}` does.
    package func startTask(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let simulated = self as? any SimulatedClock
        {
            return Task(executorPreference: simulated.taskExecutor, operation: operation)
        }
        return Task(operation: operation)
    }

    /// Starts `operation`, which returns a value or throws, in a new task, where
    /// ``startTask(_:)`` starts one.
    package func startThrowingTask<Success: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Success
    ) -> Task<Success, any Error> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let simulated = self as? any SimulatedClock
        {
            return Task(executorPreference: simulated.taskExecutor, operation: operation)
        }
        return Task(operation: operation)
    }
}

/// The device's real clock: the default of every provider, reporter and monitor. Its uptime
/// counts time asleep, as `ContinuousClock` does; it reads the boot-time clock itself, since
/// turning a `ContinuousClock` instant into seconds costs a quarter of a cached lookup. Its
/// sleeps end by that uptime too, time asleep included, whatever the wall clock does.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// The current time of the system's real-time clock.
    public func now() -> Date { Date() }

    /// Seconds since boot, sleep included: `CLOCK_MONOTONIC` on Apple systems (which counts
    /// through sleep there), `CLOCK_BOOTTIME` elsewhere (Linux, Android).
    public func uptime() -> TimeInterval {
        var spec = timespec()
        #if canImport(Darwin)
            clock_gettime(CLOCK_MONOTONIC, &spec)
        #else
            clock_gettime(CLOCK_BOOTTIME, &spec)
        #endif
        return TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1e9
    }

    /// Sleeps until ``uptime()`` has moved `duration` seconds, time asleep included, on
    /// dispatch timers that cancellation releases at once.
    public func sleep(for duration: TimeInterval) async throws {
        guard duration > 0 else { return try Task.checkCancellation() }
        let clock = self
        try await TimerSleep.sleep(seconds: duration, bootClock: { clock.uptime() })
    }

    /// Runs `operation` in a task of its own, cancelled when ``uptime()`` has moved `seconds`
    /// since the task started to run (``BootClockAlarm``): its result, or `nil` when the alarm
    /// went off before the operation ended (after it ended), as on the manual clock. The
    /// seconds count from the operation's start, not from the call, so a task left queued for
    /// a thread (every thread of the process busy: a loaded test run) keeps its whole time;
    /// later waits for a thread, after the operation has suspended, count. Cancelling the
    /// calling task cancels the operation and gets its outcome, even if the alarm went off too;
    /// a caller cancelled already does not start it.
    ///
    /// Every token request is bounded so: an alarm is two dispatch timers, where racing a
    /// sleep took a task group and a second task for every request in flight.
    package func timeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result? {
        try Task.checkCancellation()
        guard seconds > 0 else { return nil }
        let clock = self
        let alarm = BootClockAlarm(seconds: seconds, bootClock: { clock.uptime() })
        // The alarm's time starts where the operation does. The operation's task stops the
        // alarm as it ends, so an alarm going off between that end and this caller's
        // resumption does not cancel a task that has finished.
        let task = Task { () -> (Swift.Result<Result, any Error>, BootClockAlarm.Ending) in
            alarm.arm()
            let outcome: Swift.Result<Result, any Error>
            do {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            return (outcome, alarm.stop())
        }
        alarm.listen { ending in
            if case .wentOff = ending { task.cancel() }
        }
        let (outcome, ending) = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        // A late result is not kept: an operation may carry its failure as a value, and the
        // manual clock's timeouts drop it too. A caller cancelled meanwhile gets the outcome
        // of its cancellation, not a timeout.
        if case .wentOff = ending, !Task.isCancelled { return nil }
        return try outcome.get()
    }
}
