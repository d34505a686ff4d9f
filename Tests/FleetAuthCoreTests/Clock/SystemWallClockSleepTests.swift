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

    /// A boot clock that reads `readings` in turn, then the last one forever.
    static func bootClock(_ readings: [TimeInterval]) -> @Sendable () -> TimeInterval {
        let next = LockedState(0)
        return {
            let index = next.withLock { index in
                defer { index += 1 }
                return index
            }
            return readings[min(index, readings.count - 1)]
        }
    }

    /// The device slept through part of the wait, as the boot clock says: the first timer to
    /// fire ends the sleep without arming again.
    @Test func aSleepEndsAtTheFirstTimerOnceTheBootClockHasMovedFarEnough() async throws {
        let armedAgain = LockedState(0)
        try await TimerSleep.sleep(
            seconds: 0.001, bootClock: Self.bootClock([100, 200]), armed: { armedAgain.withLock { $0 += 1 } })
        #expect(armedAgain.withLock { $0 } == 0)
    }

    /// A timer that fires before the boot clock has moved the whole sleep (a wall clock set
    /// forward) arms itself again for what is left.
    @Test func aTimerThatFiresEarlyArmsItselfAgainForWhatIsLeft() async throws {
        let armedAgain = LockedState(0)
        try await TimerSleep.sleep(
            seconds: 0.002, bootClock: Self.bootClock([100, 100.0005, 100.0005, 200]),
            armed: { armedAgain.withLock { $0 += 1 } })
        #expect(armedAgain.withLock { $0 } >= 1)
    }
}
