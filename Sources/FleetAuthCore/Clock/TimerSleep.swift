package import Foundation

/// One sleep of the system clock: it ends when the boot clock has moved its seconds, the
/// device asleep or not (``BootClockAlarm``), and cancellation tears it down at once.
package enum TimerSleep {
    /// Sleeps `seconds` (positive and finite) of `bootClock` (seconds on a clock that counts
    /// time asleep), or until the calling task is cancelled, when it throws
    /// `CancellationError`. `armed` hears each timer armed again because it fired before the
    /// boot clock reached the end (for tests).
    package static func sleep(
        seconds: TimeInterval, bootClock: @escaping @Sendable () -> TimeInterval,
        armed: (@Sendable () -> Void)? = nil
    ) async throws {
        let alarm = BootClockAlarm(seconds: seconds, bootClock: bootClock, armedAgain: armed)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                alarm.start { ending in
                    switch ending {
                    case .wentOff: continuation.resume()
                    case .stopped: continuation.resume(throwing: CancellationError())
                    }
                }
            }
        } onCancel: {
            alarm.stop()
        }
    }
}
