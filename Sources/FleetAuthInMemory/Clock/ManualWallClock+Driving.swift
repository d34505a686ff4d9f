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
    /// The default horizon covers the SDK's own waits with its default policies (latency,
    /// the longest retry backoff with its jitter); request timeouts (15 s by default) come
    /// due only with a longer one.
    /// - Returns: the operation's result; or ``ManualWallClock/Stalled`` when the operation
    ///   waits for a deadline beyond `horizon`, or for nothing on this clock at all
    ///   (the operation is then cancelled, and this returns once it ends: an operation that
    ///   ignores cancellation, such as one awaiting another task's `value`, keeps it waiting);
    ///   or `CancellationError` as soon as the task that called this is cancelled (a test's
    ///   time limit): the clock stops there and the operation is cancelled, not waited for.
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
                await settle()
                if finished.withLock({ $0 }) { break }
                if Task.isCancelled { return .failure(CancellationError()) }
                let next = nextDeadline
                guard let next, next.timeIntervalSince(now()) <= horizon else {
                    task.cancel()
                    _ = await task.result
                    return .failure(Stalled(horizon: horizon, nextDeadline: next.map { $0.timeIntervalSince(now()) }))
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
    /// code on the main actor, or a real network. On Apple platforms before
    /// macOS 15 and iOS 18, which lack task executors, the clock sees no work and this returns
    /// at once: advance the clock by hand with ``waitForSleepers(count:within:)`` there.
    public func settle() async {
        await executor.settle()
    }

    /// Moves the clock to the wall time `date` one sleeper deadline at a time, waiting at
    /// each for the work it woke to park again (``settle()``): background refreshes and
    /// retries happen at their own moments, in order, not all at `date`. If the calling
    /// task is cancelled, the clock stops where it is and this returns.
    public func run(until date: Date) async {
        await settle()
        while !Task.isCancelled, let next = nextDeadline, next <= date {
            advance(to: next)
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

        /// Says what the operation waited for and which horizon would reach it.
        public var description: String {
            if let nextDeadline {
                return
                    "The operation waits for a deadline \(nextDeadline) s away, beyond the horizon of \(horizon) s; pass runToCompletion(horizon:) at least that, or advance the clock yourself."
            }
            return
                "The operation waits for nothing on this clock (no sleeper left): it waits for work the clock does not drive."
        }
    }
}
