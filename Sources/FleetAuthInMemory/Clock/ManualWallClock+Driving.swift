import FleetAuthCore
public import Foundation

extension ManualWallClock {
    /// Runs `operation` to completion while moving the clock forward to every sleep
    /// deadline at most `horizon` seconds away (network latency, retry backoff), so
    /// simulations and tests need not advance the clock by hand. The operation runs on the
    /// clock's executor with every child task it starts (task groups, `async let`), and the
    /// clock moves only when all that work is suspended (``settle()``), so every step
    /// happens in deadline order, as it would in real time. Many providers may share one
    /// clock.
    ///
    /// Work the clock does not run gets a chance too: before the clock gives up, and before
    /// it moves to the timeout of a wait whose work is off the clock (an authorization whose
    /// completion comes from `Task {}` or a dispatch queue, a real network), it waits up to
    /// ``offClockGrace`` of real time for that work to come back.
    ///
    /// The default horizon covers the SDK's own waits with its default policies (latency,
    /// the longest retry backoff with its jitter); request timeouts (15 s by default) come
    /// due only with a longer one.
    /// - Returns: the operation's result; or ``ManualWallClock/Stalled`` when the operation
    ///   waits for a deadline beyond `horizon`, or for nothing on this clock at all
    ///   (the operation is then cancelled, and this returns once it ends: an operation that
    ///   ignores cancellation, such as one awaiting another task's `value`, keeps it waiting);
    ///   or `CancellationError` as soon as the task that called this is cancelled (a test's
    ///   time limit): the clock stops there and the operation is cancelled, not waited for.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public func runToCompletion<T: Sendable>(
        horizon: TimeInterval = 10, _ operation: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error> {
        let finished = LockedState(false)
        let task = startSimulated {
            defer { finished.withLock { $0 = true } }
            return try await operation()
        }
        return await withTaskCancellationHandler {
            while true {
                let mark = executor.scheduledCount
                await settle()
                if finished.withLock({ $0 }) { break }
                if Task.isCancelled { return .failure(CancellationError()) }
                let next = nextDeadline
                let reachable = next.map { $0.timeIntervalSince(now()) <= horizon } ?? false
                if !reachable || state.withLock({ $0.earliestIsTimeoutOfWorkOffTheClock() }) {
                    if await executor.waitForWork(after: mark, grace: offClockGrace) { continue }
                }
                guard let next, reachable else {
                    task.cancel()
                    _ = await task.result
                    return .failure(
                        Stalled(
                            horizon: horizon, nextDeadline: next.map { $0.timeIntervalSince(now()) },
                            offClockGrace: offClockGrace))
                }
                advance(to: next)
            }
            return await task.result
        } onCancel: {
            task.cancel()
        }
    }

    /// Returns once all the work on the clock's executor is suspended: every task the SDK
    /// started on this clock, and every operation of ``runToCompletion(horizon:_:)`` with the
    /// child tasks it starts (task groups, `async let`), is asleep on the clock, waiting for
    /// another task's result, or finished. Then nothing changes until the clock moves, so a
    /// test can read state or advance the clock knowing that everything the last advance woke
    /// has had its turn.
    ///
    /// Work the clock does not run is not waited for: a task of your own started with
    /// `Task {}` (make it a child of the operation instead: a task group or `async let`),
    /// code on the main actor, or a real network. It needs task executors (macOS 15, iOS 18,
    /// tvOS 18, watchOS 11, visionOS 2); before them, advance the clock by hand with
    /// ``waitForSleepers(count:within:)`` and ``advance(by:)``.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public func settle() async {
        await executor.settle()
    }

    /// Moves the clock to the wall time `date` one sleeper deadline at a time, waiting at
    /// each for the work it woke to park again (``settle()``): background refreshes and
    /// retries happen at their own moments, in order, not all at `date`. If the calling
    /// task is cancelled, the clock stops where it is and this returns. Before it fires the
    /// timeout of a wait for work off the clock, that work gets ``offClockGrace`` of real
    /// time to come back.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public func run(until date: Date) async {
        var mark = executor.scheduledCount
        await settle()
        while !Task.isCancelled, let next = nextDeadline, next <= date {
            if state.withLock({ $0.earliestIsTimeoutOfWorkOffTheClock() }),
                await executor.waitForWork(after: mark, grace: offClockGrace)
            {
                mark = executor.scheduledCount
                await settle()
                continue
            }
            advance(to: next)
            mark = executor.scheduledCount
            await settle()
        }
        guard !Task.isCancelled else { return }
        advance(to: date)
        await settle()
    }

    /// What ``runToCompletion(horizon:_:)`` returns when its operation waits for no
    /// deadline within the horizon: raise the horizon to let the clock reach it.
    public struct Stalled: Error, CustomStringConvertible {
        /// The horizon the run had.
        public let horizon: TimeInterval
        /// How far away the next deadline was, if there was one.
        public let nextDeadline: TimeInterval?
        /// How long the run waited for work off the clock before it gave up.
        public let offClockGrace: TimeInterval

        /// Says what the operation waited for and which horizon would reach it.
        public var description: String {
            let offClock =
                "it may be waiting for work off the clock (a completion called from `Task {}` or a dispatch queue, a task of your own, a real network), which did not come back within \(offClockGrace) s of real time (raise the clock's `offClockGrace` if it takes longer)"
            if let nextDeadline {
                return
                    "The operation waits for no sleeper due within the horizon of \(horizon) s (the next is \(nextDeadline) s away), and \(offClock). If it waits for that deadline, pass runToCompletion(horizon:) at least that, or advance the clock yourself."
            }
            return "The operation waits for nothing on this clock (no sleeper left): \(offClock)."
        }
    }
}
