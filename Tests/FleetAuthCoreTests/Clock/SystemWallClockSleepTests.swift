import FleetAuthCore
import Foundation
import Testing

/// The system clock's sleep, which every request's timeout races: it ends with its timer,
/// and a cancelled one ends at once. The only tests that wait on real time, for at most a
/// few milliseconds each, since the system clock is what they test; nothing here asserts how
/// long anything took.
@Suite("System clock: sleeps end with their timer or at once when cancelled", .timeLimit(.minutes(1)))
struct SystemWallClockSleepTests {
    let clock = SystemWallClock()

    @Test func aSleepEndsWhenItsTimerFires() async throws {
        try await clock.sleep(for: 0.001)
        let timedOut: Void? = try await clock.withTimeout(0.005) { try await SystemWallClock().sleep(for: 1e6) }
        #expect(timedOut == nil)
    }

    @Test func aTimeoutTheOperationBeatsReturnsItsResult() async throws {
        let answer = try await clock.withTimeout(1e6) { 42 }
        #expect(answer == 42)
    }

    @Test func cancellingASleepEndsItAtOnce() async throws {
        let sleeper = Task { try await SystemWallClock().sleep(for: 1e6) }
        sleeper.cancel()
        let outcome = await sleeper.result
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test func aSleepInACancelledTaskThrowsWithoutWaiting() async throws {
        let outcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await SystemWallClock().sleep(for: 1e6)
        }.result
        #expect(throws: CancellationError.self) { try outcome.get() }
    }
}
