import Dispatch
package import Foundation

/// One sleep of the system clock that ends by the time that passed in the world, the device
/// asleep or not, and that cancellation tears down at once.
///
/// The sleep ends when the boot clock (``SystemWallClock/uptime()``: `CLOCK_MONOTONIC` on
/// Apple systems, `CLOCK_BOOTTIME` on Linux, both counting time asleep) has moved `seconds`.
/// No dispatch timer follows that clock, so two watch it: one on `DispatchTime`, which stops
/// while the device sleeps but never moves with the wall clock, and one on `DispatchWallTime`,
/// which counts sleep but follows a change of the wall clock. Whichever fires first reads the
/// boot clock and either ends the sleep or arms itself again for what is left; so the sleep
/// ends late only if the device slept and someone set the clock back during the same sleep.
///
/// A cancelled `Task.sleep` keeps about 660 bytes queued until its deadline (on Linux), and
/// every token request races a sleep of its timeout: these timers go the moment the sleep is
/// cancelled.
package enum TimerSleep {
    /// The sleeper and its armed timers once recorded, or how the sleep ended before (`true`: cancelled).
    private struct Sleep: @unchecked Sendable {
        // Safe because the only members that are not Sendable are the dispatch timers, which
        // are cancelled once, by whoever takes them out under the lock, and otherwise only
        // armed again by their own handlers on the timer queue: dispatch sources are
        // thread-safe objects whose schedule and cancel may be called from any thread.
        var sleeper: (continuation: CheckedContinuation<Void, any Error>, timers: [any DispatchSourceTimer])?
        var endedEarly: Bool?
    }

    /// The queue the timers fire on; they only read the boot clock and resume a continuation.
    private static let queue = DispatchQueue(label: "FleetAuth.TimerSleep")

    /// Sleeps `seconds` (positive and finite) of `bootClock` (seconds on a clock that counts
    /// time asleep), or until the calling task is cancelled, when it throws
    /// `CancellationError`. `armed` hears each timer armed again because it fired before the
    /// boot clock reached the end (for tests).
    package static func sleep(
        seconds: TimeInterval, bootClock: @escaping @Sendable () -> TimeInterval,
        armed: (@Sendable () -> Void)? = nil
    ) async throws {
        let deadline = bootClock() + seconds
        let sleep = LockedState(Sleep())
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let clocks = [DispatchClock.uptime, .wall]
                let timers = clocks.indices.map { index in
                    let timer = DispatchSource.makeTimerSource(queue: queue)
                    // The handler holds the sleep and its timer until `finish` cancels the
                    // timer, which releases the handler: every sleep's timers are cancelled
                    // as it ends, so nothing outlives it. It may fire before the sleep is
                    // recorded below, and still arms itself again.
                    timer.setEventHandler {
                        let left = deadline - bootClock()
                        guard left > 0 else { return end(sleep, cancelled: false) }
                        clocks[index].arm(timer, after: left)
                        armed?()
                    }
                    // Armed before it is recorded (a source is never released unarmed); one that
                    // fires or is cancelled meanwhile leaves its outcome for this to deliver.
                    clocks[index].arm(timer, after: seconds)
                    timer.resume()
                    return timer
                }
                let endedEarly = sleep.withLock { state in
                    if state.endedEarly == nil { state.sleeper = (continuation, timers) }
                    return state.endedEarly
                }
                if let endedEarly { finish(continuation, timers, cancelled: endedEarly) }
            }
        } onCancel: {
            end(sleep, cancelled: true)
        }
    }

    /// The two clocks a dispatch timer can follow.
    private enum DispatchClock {
        /// `DispatchTime`: stops while the device sleeps; a change of the wall clock does not move it.
        case uptime
        /// `DispatchWallTime`: counts sleep; a change of the wall clock moves it.
        case wall

        /// Arms `timer` to fire once, `seconds` from now on this clock.
        func arm(_ timer: any DispatchSourceTimer, after seconds: TimeInterval) {
            let interval = DispatchTimeInterval.nanoseconds(Int(min(seconds, 1e9) * 1_000_000_000))
            switch self {
            case .uptime: timer.schedule(deadline: .now() + interval)
            case .wall: timer.schedule(wallDeadline: .now() + interval)
            }
        }
    }

    /// Ends the sleep once, from a timer or from the task's cancellation.
    private static func end(_ sleep: LockedState<Sleep>, cancelled: Bool) {
        let sleeper = sleep.withLock { state in
            defer { state.sleeper = nil }
            if state.sleeper == nil, state.endedEarly == nil { state.endedEarly = cancelled }
            return state.sleeper
        }
        if let sleeper { finish(sleeper.continuation, sleeper.timers, cancelled: cancelled) }
    }

    /// Releases the timers and resumes the sleeper: with `CancellationError` if cancelled.
    private static func finish(
        _ continuation: CheckedContinuation<Void, any Error>, _ timers: [any DispatchSourceTimer], cancelled: Bool
    ) {
        for timer in timers { timer.cancel() }
        if cancelled {
            continuation.resume(throwing: CancellationError())
        } else {
            continuation.resume()
        }
    }
}
