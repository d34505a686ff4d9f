import Dispatch
import Foundation

/// One sleep of the system clock on a dispatch timer that cancellation tears down at once.
///
/// A cancelled `Task.sleep` keeps about 660 bytes queued until its deadline (on Linux), and
/// every token request races a sleep of its timeout: a burst of fetches held more memory in
/// cancelled timers than in tokens. This sleep's timer goes the moment it is cancelled.
enum TimerSleep {
    /// The sleeper and its armed timer once recorded, or how the sleep ended before (`true`: cancelled).
    private struct Sleep: @unchecked Sendable {
        // Safe because the only member that is not Sendable is the dispatch timer, and it is
        // only ever cancelled, once, by whoever takes it out under the lock: dispatch sources
        // are thread-safe objects whose cancel may be called from any thread.
        var sleeper: (continuation: CheckedContinuation<Void, any Error>, timer: any DispatchSourceTimer)?
        var endedEarly: Bool?
    }

    /// The queue the timers fire on; they only resume a continuation.
    private static let queue = DispatchQueue(label: "FleetAuth.TimerSleep")

    /// Sleeps `seconds` (positive and finite), or until the calling task is cancelled, when
    /// it throws `CancellationError`.
    static func sleep(seconds: TimeInterval) async throws {
        let sleep = LockedState(Sleep())
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let timer = DispatchSource.makeTimerSource(queue: queue)
                // The handler holds the sleep until `end` cancels the timer, which lets it go.
                timer.setEventHandler { end(sleep, cancelled: false) }
                // Armed before it is recorded (a source is never released unarmed); one that
                // fires or is cancelled meanwhile leaves its outcome for this to deliver.
                timer.schedule(deadline: .now() + .nanoseconds(Int(seconds * 1_000_000_000)))
                timer.resume()
                let endedEarly = sleep.withLock { state in
                    if state.endedEarly == nil { state.sleeper = (continuation, timer) }
                    return state.endedEarly
                }
                if let endedEarly { finish(continuation, timer, cancelled: endedEarly) }
            }
        } onCancel: {
            end(sleep, cancelled: true)
        }
    }

    /// Ends the sleep once, from its timer or from the task's cancellation.
    private static func end(_ sleep: LockedState<Sleep>, cancelled: Bool) {
        let sleeper = sleep.withLock { state in
            defer { state.sleeper = nil }
            if state.sleeper == nil, state.endedEarly == nil { state.endedEarly = cancelled }
            return state.sleeper
        }
        if let sleeper { finish(sleeper.continuation, sleeper.timer, cancelled: cancelled) }
    }

    /// Releases the timer and resumes the sleeper: with `CancellationError` if cancelled.
    private static func finish(
        _ continuation: CheckedContinuation<Void, any Error>, _ timer: any DispatchSourceTimer, cancelled: Bool
    ) {
        timer.cancel()
        if cancelled {
            continuation.resume(throwing: CancellationError())
        } else {
            continuation.resume()
        }
    }
}
