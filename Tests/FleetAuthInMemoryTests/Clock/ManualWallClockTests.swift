import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Manual wall clock", .timeLimit(.minutes(10)))
struct ManualWallClockTests {
    @Test func sleepersWakeOnlyWhenTheirDeadlinePasses() async throws {
        let clock = ManualWallClock()
        let start = clock.now()
        let woke = LockedState<[Int]>([])
        let short = Task {
            try await clock.sleep(for: 1); woke.withLock { $0.append(1) }
        }
        let long = Task {
            try await clock.sleep(for: 5); woke.withLock { $0.append(5) }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 2)
        try await short.value
        #expect(woke.withLock { $0 } == [1])
        #expect(clock.sleeperCount == 1)
        clock.advance(by: 3)
        try await long.value
        #expect(woke.withLock { $0 } == [1, 5])
        #expect(clock.now() == start.addingTimeInterval(5))
    }

    /// Sleepers due at the same moment wake in the order they went to sleep, so that a
    /// simulation takes the same steps on every run.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func sleepersDueTogetherWakeInTheOrderTheySlept() async throws {
        let clock = ManualWallClock()
        let woke = LockedState<[Int]>([])
        let result = await clock.runToCompletion {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        try? await clock.sleep(for: 1)
                        woke.withLock { $0.append(index) }
                    }
                }
            }
        }
        #expect(throws: Never.self) { try result.get() }
        #expect(woke.withLock { $0 } == Array(0..<100))
    }

    /// A timeout is an entry among the sleepers, not a task sleeping beside the operation: at
    /// its deadline it cancels the operation, whose sleep ends as a cancelled sleep does, and
    /// the caller gets `nil` at that moment with nothing left on the clock.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTimeoutCancelsItsOperationAtItsDeadline() async throws {
        let clock = ManualWallClock()
        let start = clock.now()
        let sawCancellation = LockedState(false)
        let result = await clock.runToCompletion {
            try await clock.withTimeout(1) { () async throws -> Int in
                do {
                    try await clock.sleep(for: 10)
                } catch {
                    sawCancellation.withLock { $0 = error is CancellationError }
                    throw error
                }
                return 42
            }
        }
        #expect(try result.get() == nil)
        #expect(sawCancellation.withLock { $0 })
        #expect(clock.now() == start.addingTimeInterval(1))
        #expect(clock.sleeperCount == 0)
    }

    /// Of an operation's sleep and its timeout due at the same moment, the sleep wakes first:
    /// an answer that arrives as time runs out is the operation's, whether the sleep began
    /// before the timeout was set or after (the second sleep of `[0.5, 0.5]`).
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [[1.0], [0.5, 0.5]])
    func aSleepEndingAsItsTimeoutRunsOutWins(sleeps: [Double]) async throws {
        let clock = ManualWallClock()
        let result = await clock.runToCompletion {
            try await clock.withTimeout(1) { () async throws -> Int in
                for seconds in sleeps { try await clock.sleep(for: seconds) }
                return 42
            }
        }
        #expect(try result.get() == 42)
        #expect(clock.sleeperCount == 0)
    }

    /// `settle()` returns only once every job queued on the clock's executor has run, however
    /// many are queued while others run.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func settleWaitsForEveryQueuedJob() async {
        let clock = ManualWallClock()
        let finished = LockedState(0)
        for _ in 0..<100 {
            _ = clock.startSimulated {
                for _ in 0..<3 { await Task.yield() }
                finished.withLock { $0 += 1 }
            }
        }
        await clock.settle()
        #expect(finished.withLock { $0 } == 100)
    }

    @Test func cancellingASleeperThrowsAndRemovesIt() async {
        let clock = ManualWallClock()
        let sleeper = Task { try await clock.sleep(for: 10) }
        await clock.waitForSleepers(count: 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    /// A test's time limit cancels the test: a wait for sleepers that never come ends then,
    /// whether it was cancelled before it started waiting or while it waited.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func cancellingAWaitForSleepersEndsIt() async throws {
        let clock = ManualWallClock()
        let ended = LockedState(0)
        let early = clock.startSimulated {
            await clock.waitForSleepers(count: 1)
            ended.withLock { $0 += 1 }
        }
        early.cancel()
        await clock.settle()
        #expect(ended.withLock { $0 } == 1, "cancelled before it waited")
        let waiting = clock.startSimulated {
            await clock.waitForSleepers(count: 1)
            ended.withLock { $0 += 1 }
        }
        await clock.settle()  // it waits now
        #expect(ended.withLock { $0 } == 1)
        waiting.cancel()
        await clock.settle()
        #expect(ended.withLock { $0 } == 2, "cancelled while it waited")
        // A sleeper now satisfies no watcher left behind (one resumed twice would trap).
        let sleeper = clock.startSimulated { try await clock.sleep(for: 1) }
        await clock.settle()
        #expect(clock.sleeperCount == 1)
        sleeper.cancel()
    }

    @Test func waitForSleepersWithinIgnoresDistantOnes() async throws {
        let clock = ManualWallClock()
        let distant = Task { try await clock.sleep(for: 1000) }
        await clock.waitForSleepers(count: 1)
        let near = Task { try await clock.sleep(for: 2) }
        await clock.waitForSleepers(count: 1, within: 5)
        #expect(clock.nextDeadline == clock.now().addingTimeInterval(2))
        clock.advance(by: 2)
        try await near.value
        distant.cancel()
    }

    @Test func zeroSleepReturnsAtOnceAndTimeNeverGoesBack() async throws {
        let clock = ManualWallClock(now: Date(timeIntervalSince1970: 100))
        try await clock.sleep(for: 0)
        clock.advance(to: Date(timeIntervalSince1970: 50))
        #expect(clock.now() == Date(timeIntervalSince1970: 100))
    }

    /// The SDK's jitter and refresh spread come from the clock: the same on every run, yet
    /// spread over the unit interval.
    @Test func randomDrawsRepeatFromClockToClockAndSpreadOut() {
        let first = ManualWallClock()
        let second = ManualWallClock()
        let draws = (0..<1000).map { _ in first.randomUnit() }
        #expect(draws == (0..<1000).map { _ in second.randomUnit() })
        #expect(draws.allSatisfy { (0..<1).contains($0) })
        for decile in 0..<10 {
            let inDecile = draws.filter { Int($0 * 10) == decile }.count
            #expect((60...140).contains(inDecile), "decile \(decile): \(inDecile) of 1000")
        }
    }
}
