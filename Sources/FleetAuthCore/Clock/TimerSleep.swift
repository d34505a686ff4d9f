import Dispatch
import Foundation

/// One sleep of the system clock on a dispatch timer that cancellation tears down at once.
///
/// A cancelled `Task.sleep` keeps about 660 bytes queued until its deadline (on Linux), and
/// every token request races a sleep of its timeout: a burst of fetches held more memory in
/// cancelled timers than in tokens. This sleep's timer goes the moment it is cancelled.
final class TimerSleep: Sendable {
    private enum Phase: @unchecked Sendable {
        // Safe because the only member that is not Sendable is the dispatch timer, and it is
        // only ever cancelled (once, by whoever takes it out of the locked phase): dispatch
        // sources are thread-safe objects whose cancel may be called from any thread.
        /// Its timer armed and not yet recorded here.
        case arming
        case sleeping(CheckedContinuation<Void, any Error>, any DispatchSourceTimer)
        /// Ended while arming, by cancellation or by the timer: for `start` to deliver.
        case ended(cancelled: Bool)
        case finished
    }

    private let phase = LockedState<Phase>(.arming)

    /// The queue the timers fire on; they only resume a continuation.
    private static let queue = DispatchQueue(label: "FleetAuth.TimerSleep")

    /// Sleeps `seconds` (positive and finite), or until the calling task is cancelled, when
    /// it throws `CancellationError`.
    static func sleep(seconds: TimeInterval) async throws {
        let sleep = TimerSleep()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                sleep.start(seconds: seconds, continuation)
            }
        } onCancel: {
            sleep.finish(cancelled: true)
        }
    }

    private func start(seconds: TimeInterval, _ continuation: CheckedContinuation<Void, any Error>) {
        let timer = DispatchSource.makeTimerSource(queue: Self.queue)
        // The handler holds the sleep until `finish` cancels the timer, which lets it go.
        timer.setEventHandler { self.finish(cancelled: false) }
        // Armed before it is recorded (a source is never released unarmed); one that fires or
        // is cancelled meanwhile leaves its outcome for this to deliver.
        timer.schedule(deadline: .now() + .nanoseconds(Int(seconds * 1_000_000_000)))
        timer.resume()
        let endedCancelled = phase.withLock { phase -> Bool? in
            guard case .ended(let cancelled) = phase else {
                phase = .sleeping(continuation, timer)
                return nil
            }
            phase = .finished
            return cancelled
        }
        if let endedCancelled { Self.end(continuation, timer, cancelled: endedCancelled) }
    }

    /// Ends the sleep once, from its timer or from the task's cancellation.
    private func finish(cancelled: Bool) {
        let sleeping = phase.withLock { phase -> (CheckedContinuation<Void, any Error>, any DispatchSourceTimer)? in
            switch phase {
            case .sleeping(let continuation, let timer):
                phase = .finished
                return (continuation, timer)
            case .arming:
                phase = .ended(cancelled: cancelled)
                return nil
            case .ended, .finished:
                return nil
            }
        }
        if let (continuation, timer) = sleeping { Self.end(continuation, timer, cancelled: cancelled) }
    }

    /// Releases the timer and resumes the sleeper: with `CancellationError` if cancelled.
    private static func end(
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
