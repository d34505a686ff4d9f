import FleetAuthCore

/// The work the clock counts: the SDK's fetches and the operations it runs to completion.
/// Each is a unit, running from before its task starts until it ends, and parked while it
/// sleeps on the clock or waits for another unit's result; ``settle()`` returns once no
/// unit runs.
extension ManualWallClock {
    /// A draw in `0...1` from the clock's fixed seed (SplitMix64): the SDK's jitter and
    /// refresh spread are the same on every run of a test.
    package func randomUnit() -> Double {
        state.withLock { state in
            state.randomState &+= 0x9E37_79B9_7F4A_7C15
            var z = state.randomState
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
    }

    /// Registers a unit of work that a new task is about to run, as running.
    package func beginWork() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.begin(state.nextID)
            return state.nextID
        }
    }

    /// Runs `body` as unit `unit`, which ends when it returns.
    package func perform(_ unit: UInt64, _ body: @Sendable () async -> Void) async {
        await Self.$currentUnit.withValue(unit) { await body() }
        endWork(unit)
    }

    func endWork(_ unit: UInt64) {
        let waiters = state.withLock { state in
            state.end(unit)
            return state.takeSettleWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Marks the calling task's unit, if any, as parked on another unit's result.
    package func parkCurrentWork() -> UInt64? {
        guard let unit = Self.currentUnit else { return nil }
        let waiters = state.withLock { state in
            state.mark(unit, running: false)
            return state.takeSettleWaiters()
        }
        for waiter in waiters { waiter.resume() }
        return unit
    }

    /// Marks `unit` as running again.
    package func resumeWork(_ unit: UInt64) {
        state.withLock { $0.mark(unit, running: true) }
    }

    /// Returns once all the work the clock counts is parked: every fetch the SDK started
    /// on this clock, and every operation of ``runToCompletion(horizon:_:)``, is asleep on
    /// the clock, waiting for another one's result, or finished. Then nothing changes
    /// until the clock moves, so a test can read state or advance the clock knowing that
    /// everything the last advance woke has had its turn.
    public func settle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let settled = state.withLock { state -> Bool in
                if state.isSettled { return true }
                state.settleWaiters.append(continuation)
                return false
            }
            if settled { continuation.resume() }
        }
    }

    /// Runs `body` as a unit of work the clock counts, so that ``settle()`` waits for it
    /// until it parks or ends.
    func counted<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Task<T, any Error> {
        let unit = beginWork()
        return Task {
            defer { endWork(unit) }
            return try await Self.$currentUnit.withValue(unit) { try await body() }
        }
    }
}
