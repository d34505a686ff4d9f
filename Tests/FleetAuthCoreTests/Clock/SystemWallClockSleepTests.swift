import FleetAuthCore
import Foundation
import Testing

/// The system clock's sleep and timeout (which bounds every token request): both end with
/// their alarm, and a cancelled one ends at once. The only tests that wait on real time (for a
/// few milliseconds each, and one holds the pool's threads 2 s), since the system clock is
/// what they test; nothing here asserts how long anything took.
@Suite("System clock: sleeps and timeouts end with their alarm or at once when cancelled", .timeLimit(.minutes(1)))
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

    @Test func anOperationThatThrowsFirstHasItsErrorThrown() async throws {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            let _: Int? = try await clock.withTimeout(1e6) { throw Refused() }
        }
    }

    /// The calling task cancelled: the operation hears it at once (else it would sleep 5 s and
    /// answer), and its outcome is what the caller gets.
    @Test func cancellingTheCallerCancelsTheOperation() async throws {
        let started = AsyncStream<Void>.makeStream()
        let caller = Task {
            try await clock.withTimeout(1e6) { () async throws -> Int in
                started.continuation.yield()
                try await SystemWallClock().sleep(for: 5)
                return 1
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        caller.cancel()
        let outcome = await caller.result
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    /// A caller cancelled before it asks: `CancellationError`, and the operation never starts
    /// (a token fetch's headers closure does not run for a fetch cancelled first).
    @Test func aCallerCancelledAlreadyDoesNotStartTheOperation() async {
        let ran = LockedState(false)
        let outcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await clock.withTimeout(1e6) { () async throws -> Int in
                ran.withLock { $0 = true }
                return 1
            }
        }.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(ran.withLock { $0 } == false)
    }

    /// No time to run in: `nil` at once, and the operation never starts.
    @Test(arguments: [0, -1, .nan] as [TimeInterval])
    func aTimeoutOfNoTimeReturnsNilWithoutRunningTheOperation(seconds: TimeInterval) async throws {
        let ran = LockedState(false)
        let answer = try await clock.withTimeout(seconds) { () async throws -> Int in
            ran.withLock { $0 = true }
            return 1
        }
        #expect(answer == nil)
        #expect(ran.withLock { $0 } == false)
    }

    /// An operation that ignores its cancellation and answers after the alarm went off: a
    /// timeout, as on the manual clock (an operation may carry a failure as its result).
    @Test func anAnswerAfterTheAlarmIsATimeout() async throws {
        let answer = try await clock.withTimeout(0.001) { () async throws -> Int in
            // Ends only when the alarm cancels it.
            try? await SystemWallClock().sleep(for: 1e6)
            return 42
        }
        #expect(answer == nil)
    }

    /// The alarm went off and then the caller was cancelled, before the operation ended: the
    /// caller gets its cancellation, not a timeout. The operation hears the alarm on the alarm's
    /// own queue and gives up 5 s after it starts on a dispatch timer, so neither waits for a
    /// thread of a busy pool.
    @Test func aCallerCancelledAfterTheAlarmGetsItsCancellation() async {
        let (alarmHeard, heard) = AsyncStream<Void>.makeStream()
        // Where the operation waits, whatever its cancellation, until the test opens it; opened
        // first, it does not wait.
        let gate = LockedState<(opened: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
        let caller = Task {
            try await clock.withTimeout(0.001) { () async throws -> Int in
                Self.givingUp(heard)
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let opened = gate.withLock { gate in
                            if !gate.opened { gate.waiter = continuation }
                            return gate.opened
                        }
                        if opened { continuation.resume() }
                    }
                } onCancel: {
                    heard.yield()  // the first cancellation: the alarm's, unless it never went off
                }
                try Task.checkCancellation()
                return 1
            }
        }
        var iterator = alarmHeard.makeAsyncIterator()
        let alarmWentOff = await iterator.next() != nil
        #expect(alarmWentOff)
        caller.cancel()
        let waiter = gate.withLock { gate in
            gate.opened = true
            return gate.waiter
        }
        waiter?.resume()
        let outcome = await caller.result
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    /// Every thread of the concurrency pool busy (a loaded test run, a saturated simulator):
    /// the timeout's operation waits 2 s for a thread, twice its 1 s, then answers at once
    /// unless cancelled. That wait is not the operation's time, so its answer is returned.
    /// (The blockers hold their threads without suspending, as synchronous work does; when
    /// other work holds the pool they run later, and the test still passes.)
    @Test func timeQueuedForAThreadDoesNotCountAgainstTheOperation() async throws {
        let blockers = (0..<ProcessInfo.processInfo.activeProcessorCount).map { _ in
            Task { usleep(2_000_000) }
        }
        let answer = try await clock.withTimeout(1) { () async throws -> Int in
            try Task.checkCancellation()  // an operation that heard the alarm would stop here
            return 42
        }
        for blocker in blockers { await blocker.value }
        #expect(answer == 42)
    }

    /// An alarm's time starts when it is armed, not when it is made or heard: a timeout's
    /// operation queued for a thread does not lose its time. The boot clock reads 1,000 s at
    /// arming; the first timer (1 ms later) still reads 1,000 s, so it arms itself again, and
    /// the alarm goes off only once the boot clock has moved on. Each wait gives up 5 s after
    /// the step it follows: going off waits on the test moving the clock, which a busy pool
    /// may hold up.
    @Test func anAlarmCountsFromWhenItIsArmed() async {
        let now = LockedState<TimeInterval>(0)
        let armedAgain = LockedState(0)
        let wentOffEarly = LockedState(false)
        let (armedAgainEvents, armedAgainHeard) = AsyncStream<Void>.makeStream()
        let (wentOffEvents, wentOffHeard) = AsyncStream<Void>.makeStream()
        let alarm = BootClockAlarm(
            seconds: 0.001, bootClock: { now.withLock { $0 } },
            armedAgain: {
                let first = armedAgain.withLock { count in
                    count += 1
                    return count == 1
                }
                if first { armedAgainHeard.yield() }
            })
        alarm.listen { _ in
            wentOffEarly.withLock { $0 = now.withLock { $0 } < 2000 }
            wentOffHeard.yield()
        }
        now.withLock { $0 = 1000 }
        alarm.arm()
        Self.givingUp(armedAgainHeard)
        var armedAgainIterator = armedAgainEvents.makeAsyncIterator()
        #expect(await armedAgainIterator.next() != nil)
        now.withLock { $0 = 2000 }
        Self.givingUp(wentOffHeard)
        var wentOffIterator = wentOffEvents.makeAsyncIterator()
        #expect(await wentOffIterator.next() != nil)
        #expect(wentOffEarly.withLock { $0 } == false)
        #expect(alarm.stop() == .wentOff)
    }

    /// Stopped while it is being armed, after ``BootClockAlarm/arm()`` saw it running and
    /// before its timers were recorded (the boot clock's first read, arm's, stops it): the
    /// timers it armed are cancelled, and none ever fires. A timer left armed would read the
    /// boot clock again within its 1 ms; 20 ms are given (if it were late, the test would pass,
    /// never fail wrongly).
    @Test func anAlarmStoppedWhileBeingArmedCancelsTheTimersItArmed() async throws {
        let reads = LockedState(0)
        let stopper = LockedState<BootClockAlarm?>(nil)
        let alarm = BootClockAlarm(
            seconds: 0.001,
            bootClock: {
                let first = reads.withLock { count in
                    count += 1
                    return count == 1
                }
                if first { stopper.withLock { $0 }?.stop() }
                return 0
            })
        stopper.withLock { $0 = alarm }
        let endings = LockedState<[BootClockAlarm.Ending]>([])
        alarm.listen { ending in endings.withLock { $0.append(ending) } }
        alarm.arm()
        #expect(endings.withLock { $0 } == [.stopped])
        try await clock.sleep(for: 0.02)
        #expect(reads.withLock { $0 } == 1)
        stopper.withLock { $0 = nil }
    }

    /// A listener that comes after the alarm was armed hears it go off, whether it went off
    /// before the listener came (told at once) or after.
    @Test func aListenerAfterArmingHearsTheAlarm() async {
        let alarm = BootClockAlarm(seconds: 0, bootClock: { 0 })
        alarm.arm()
        let (wentOff, heard) = AsyncStream<BootClockAlarm.Ending>.makeStream()
        Self.givingUp(heard)
        alarm.listen { ending in heard.yield(ending) }
        var iterator = wentOff.makeAsyncIterator()
        #expect(await iterator.next() == .wentOff)
        #expect(alarm.stop() == .wentOff)
    }

    /// An alarm stopped before it started tells its handler at once, and never goes off.
    @Test func anAlarmStoppedBeforeItStartsTellsItsHandlerAtOnce() {
        let alarm = BootClockAlarm(seconds: 1e6, bootClock: { 0 })
        #expect(alarm.stop() == .stopped)
        let endings = LockedState<[BootClockAlarm.Ending]>([])
        alarm.start { ending in endings.withLock { $0.append(ending) } }
        #expect(endings.withLock { $0 } == [.stopped])
        #expect(alarm.stop() == .stopped)
        #expect(endings.withLock { $0 } == [.stopped])
    }

    /// An alarm that went off says so to a later stop, and its handler heard it once. Waits
    /// for the alarm's 1 ms, and gives up after 5 s.
    @Test func anAlarmThatWentOffSaysSoWhenStopped() async {
        let alarm = BootClockAlarm(seconds: 0.001, bootClock: Self.bootClock([100, 200]))
        let endings = LockedState<[BootClockAlarm.Ending]>([])
        let (wentOff, heard) = AsyncStream<Void>.makeStream()
        alarm.start { ending in
            endings.withLock { $0.append(ending) }
            heard.yield()
        }
        Self.givingUp(heard)
        var iterator = wentOff.makeAsyncIterator()
        await iterator.next()
        #expect(alarm.stop() == .wentOff)
        #expect(endings.withLock { $0 } == [.wentOff])
    }

    /// Finishes the stream of `continuation` 5 s from now on a dispatch timer: a test waiting
    /// on it fails then, not at its time limit, when what it waits for never comes. The timer
    /// needs no thread of the concurrency pool; so start it after the test's last step that
    /// the awaited event depends on, since a busy pool may hold up that step, not the timer.
    static func givingUp<Element>(_ continuation: AsyncStream<Element>.Continuation) {
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) { continuation.finish() }
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
