import Foundation

extension TokenEngine {
    /// A stream of `scope`'s token states (`nil`: every scope's), starting with how each
    /// stands now; see ``TokenProvider/tokenStates(for:)``.
    package func tokenStates(of scope: AuthorizationScope?) -> AsyncStream<TokenState> {
        let scope = scope.map(servingScope(for:))
        let (stream, id) = states.subscribe(to: scope)
        let now = clock.uptime()
        publication.lock()
        defer { publication.unlock() }
        // Changes noted before are everyone's news; the states that hold now are the new
        // stream's start.
        let (earlier, current) = state.withLock { state in
            let earlier = state.changes
            state.changes.removeAll()
            state.watched = true
            if state.signedOut, let scope { state.signedOutScopes.insert(scope) }
            for scope in scope.map({ [$0] }) ?? Array(state.knownScopes) {
                state.noteChange(of: scope, at: now)
            }
            defer { state.changes.removeAll() }
            return (earlier, state.changes)
        }
        for change in earlier { states.publish(change.state, sequence: change.sequence) }
        for change in current { states.publish(change.state, sequence: change.sequence, to: id) }
        return stream
    }

    /// How `scope`'s token stands now, as a token-state stream would say; counts nothing
    /// and starts nothing.
    package func tokenState(of scope: AuthorizationScope) -> TokenState {
        let now = clock.uptime()
        let scope = servingScope(for: scope)
        return state.withLock { $0.tokenState(of: scope, at: now) }
    }

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

    /// The cached token for `scope`, whatever its freshness; `nil` if none. Never fetches
    /// and never suspends.
    package func cachedToken(for scope: AuthorizationScope) -> AuthToken? {
        state.withLock { $0.cache.peek(scope)?.token }
    }

    /// How many scopes have an outage or rejected values kept: for tests of their bound.
    package var keptFailureScopes: (outages: Int, rejected: Int) {
        state.withLock { ($0.gates.count, $0.rejected.count) }
    }

    /// Counts of what the engine has done so far, and what it holds now.
    package var statistics: TokenStatistics {
        state.withLock { state in
            TokenStatistics(
                fetches: state.fetches, hits: state.hits, waits: state.waits, degradedServes: state.degraded,
                cachedScopes: state.cache.count, evictedUsable: state.evictedUsable, activeFetches: state.flights.count)
        }
    }

    /// Returns once no fetch task is running, background refreshes included (a fetch
    /// cancelled by ``invalidateAll()`` counts until its task has ended).
    package func waitUntilIdle() async {
        await wait(in: \.idleWaiters) { $0.isIdle }
    }

    /// Fetches tokens for `scopes` that have none fresh, through the same single flight as
    /// every caller, and returns the errors of those that failed.
    package func prefetch(_ scopes: [AuthorizationScope]) async -> [FleetAuthError] {
        let now = clock.uptime()
        let needed = Set(scopes).filter { scope in
            state.withLock { $0.cache.peek(scope)?.freshness(at: now) } != .fresh
        }
        return await withTaskGroup(of: FleetAuthError?.self) { group in
            for scope in needed {
                group.addTask {
                    do {
                        _ = try await self.token(for: scope)
                        return nil
                    } catch let error as FleetAuthError {
                        return error
                    } catch {
                        return nil  // cancelled: the fetch goes on for other callers
                    }
                }
            }
            var failures: [FleetAuthError] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
    }
}
