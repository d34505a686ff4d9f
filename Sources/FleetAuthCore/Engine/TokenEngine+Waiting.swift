/// Waiting for the engine: until no caller waits for a fetch, or until no fetch task runs.
extension TokenEngine {
    /// Returns once no caller waits for a fetch; see ``TokenProvider/waitUntilCallersAnswered()``.
    package func waitUntilCallersAnswered() async {
        await wait(in: \.answeredWaiters) { $0.callersAnswered }
    }

    /// Wakes the callers of ``waitUntilCallersAnswered()`` if no caller waits any more: called
    /// after waiters were answered, so that those callers run after them.
    func wakeAnsweredCallers() {
        wake(state.withLock { $0.take(\.answeredWaiters, when: $0.callersAnswered) })
    }

    /// Returns at once if `condition` holds, else parks the caller in `queue` until woken.
    private func wait(
        in queue: WritableKeyPath<TokenEngineState, [TokenEngineState.ConditionWaiter]>,
        until condition: (TokenEngineState) -> Bool
    ) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state -> Bool in
                if condition(state) { return true }
                state[keyPath: queue].append(continuation)
                return false
            }
            if holds { continuation.resume() }
        }
    }

    /// Resumes `waiters`.
    func wake(_ waiters: [TokenEngineState.ConditionWaiter]) {
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no fetch task is running, background refreshes included (a fetch
    /// cancelled by ``invalidateAll()`` counts until its task has ended).
    package func waitUntilIdle() async {
        await wait(in: \.idleWaiters) { $0.isIdle }
    }
}
