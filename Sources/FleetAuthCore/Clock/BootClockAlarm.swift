import Dispatch
package import Foundation

/// One alarm of the system clock: it goes off once the boot clock has moved `seconds` since it
/// was armed, the device asleep or not, unless it is stopped first; it tells its handler once
/// either way.
///
/// The alarm goes off when the boot clock (``SystemWallClock/uptime()``: `CLOCK_MONOTONIC` on
/// Apple systems, `CLOCK_BOOTTIME` on Linux, both counting time asleep) has moved `seconds`.
/// No dispatch timer follows that clock, so two watch it: one on `DispatchTime`, which stops
/// while the device sleeps but never moves with the wall clock, and one on `DispatchWallTime`,
/// which counts sleep but follows a change of the wall clock. Whichever fires first reads the
/// boot clock and either ends the alarm or arms itself again for what is left; so the alarm
/// goes off late only if the device slept and someone set the clock back meanwhile. Both
/// timers are cancelled when the alarm ends, by either way, or, if it ends while they are
/// being armed, as soon as ``arm()`` has armed them: nothing of it stays queued.
///
/// Who hears the alarm (``listen(_:)``) and when its time starts (``arm()``) may be two
/// parties, in either order: a timeout listens where it waits and arms where the operation it
/// bounds starts to run, so time spent queued for a thread does not count against the
/// operation. ``start(_:)`` does both at once.
///
/// It is what the system clock's sleeps (``TimerSleep``) and timeouts wait on: a timeout needs
/// no task that sleeps beside the operation it bounds.
package final class BootClockAlarm: Sendable {
    /// How an alarm ended.
    package enum Ending: Sendable {
        /// The boot clock moved the alarm's seconds.
        case wentOff
        /// ``stop()`` came first.
        case stopped
    }

    /// Where the alarm is: waiting for its listener, its timers or both, or ended.
    private enum Phase {
        case waiting(handler: (@Sendable (Ending) -> Void)?, timers: [any DispatchSourceTimer]?)
        case ended(Ending)
    }

    /// The phase, under a lock.
    private struct State: @unchecked Sendable {
        // Safe because the only members that are not Sendable are the dispatch timers, which
        // are cancelled once: by whoever takes them out under the lock, or by `arm` when the
        // alarm had ended before they were recorded; otherwise only their own handlers arm them
        // again, on the timer queue. Dispatch sources are thread-safe objects whose schedule
        // and cancel may be called from any thread.
        var phase = Phase.waiting(handler: nil, timers: nil)
    }

    /// The queue the timers fire on; they only read the boot clock and end the alarm.
    private static let queue = DispatchQueue(label: "FleetAuth.BootClockAlarm")

    private let state = LockedState(State())
    private let seconds: TimeInterval
    private let bootClock: @Sendable () -> TimeInterval
    private let armedAgain: (@Sendable () -> Void)?

    /// An alarm for `seconds` of `bootClock` (seconds on a clock that counts time asleep),
    /// counted from when it is armed: at most 10⁹ s, and none (it goes off at its first
    /// timer, at once) when `seconds` is not positive. `armedAgain` hears each timer armed
    /// again because it fired before the boot clock reached the end (for tests).
    package init(
        seconds: TimeInterval, bootClock: @escaping @Sendable () -> TimeInterval,
        armedAgain: (@Sendable () -> Void)? = nil
    ) {
        self.seconds = seconds > 0 ? min(seconds, 1e9) : 0
        self.bootClock = bootClock
        self.armedAgain = armedAgain
    }

    /// Arms the alarm and gives it its listener: ``listen(_:)`` and ``arm()`` in one.
    package func start(_ handler: @escaping @Sendable (Ending) -> Void) {
        listen(handler)
        arm()
    }

    /// Gives the alarm its listener: `handler` hears how the alarm ended, once; at once if it
    /// has ended already (stopped, or gone off before anyone listened). An alarm has one
    /// listener; one given after the alarm ended only hears that ending.
    package func listen(_ handler: @escaping @Sendable (Ending) -> Void) {
        let endedEarly = state.withLock { state -> Ending? in
            switch state.phase {
            case .waiting(nil, let timers):
                state.phase = .waiting(handler: handler, timers: timers)
                return nil
            case .waiting:
                preconditionFailure("A BootClockAlarm has one listener.")
            case .ended(let ending):
                return ending
            }
        }
        if let endedEarly { handler(endedEarly) }
    }

    /// Starts the alarm's time: arms its timers for its seconds from now. Nothing is armed
    /// for an alarm that has ended. An alarm is armed once.
    package func arm() {
        let ended = state.withLock { state in
            if case .ended = state.phase { true } else { false }
        }
        if ended { return }
        let deadline = bootClock() + seconds
        let clocks = [DispatchClock.uptime, .wall]
        let timers = clocks.indices.map { index in
            let timer = DispatchSource.makeTimerSource(queue: Self.queue)
            // The handler holds the alarm and its timer until the alarm ends and cancels the
            // timer, which releases the handler: every alarm's timers are cancelled as it ends,
            // so nothing outlives it. It may fire before the timers are recorded below, and
            // still arms itself again.
            timer.setEventHandler {
                let left = deadline - self.bootClock()
                guard left > 0 else {
                    self.end(.wentOff)
                    return
                }
                clocks[index].arm(timer, after: left)
                self.armedAgain?()
            }
            // Armed before it is recorded (a source is never released unarmed); an ending that
            // comes meanwhile, from a timer or from `stop()`, leaves them for this to cancel.
            clocks[index].arm(timer, after: seconds)
            timer.resume()
            return timer
        }
        let recorded = state.withLock { state -> Bool in
            switch state.phase {
            case .waiting(let handler, nil):
                state.phase = .waiting(handler: handler, timers: timers)
                return true
            case .waiting:
                preconditionFailure("A BootClockAlarm is armed once.")
            case .ended:
                return false
            }
        }
        if !recorded { for timer in timers { timer.cancel() } }
    }

    /// Stops the alarm unless it went off: returns how it ended (``Ending/wentOff`` if the
    /// boot clock got there first).
    @discardableResult
    package func stop() -> Ending {
        end(.stopped)
    }

    /// Ends the alarm once, from a timer or from ``stop()``; returns how it ended.
    @discardableResult
    private func end(_ ending: Ending) -> Ending {
        let previous = state.withLock { state -> Phase in
            let previous = state.phase
            if case .ended = previous { return previous }
            state.phase = .ended(ending)
            return previous
        }
        switch previous {
        case .ended(let earlier): return earlier
        case .waiting(let handler, let timers):
            Self.finish(handler, timers ?? [], ending)
            return ending
        }
    }

    /// Releases the timers and tells the handler.
    private static func finish(
        _ handler: (@Sendable (Ending) -> Void)?, _ timers: [any DispatchSourceTimer], _ ending: Ending
    ) {
        for timer in timers { timer.cancel() }
        handler?(ending)
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
}
