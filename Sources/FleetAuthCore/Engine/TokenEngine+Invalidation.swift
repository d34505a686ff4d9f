extension TokenEngine {
    /// Drops `tokenValue` for `scope` because the fleet service rejected it (401/403).
    ///
    /// The token is dropped only if it is still the cached one, so a late rejection of an
    /// older token does not cause a second refetch. Either way the value is remembered:
    /// a later fetch that returns it fails with `rejectedTokenReissued`.
    /// - Parameters:
    ///   - tokenValue: the token the fleet service refused.
    ///   - scope: what the token was fetched for.
    ///   - rejection: what the fleet service said, if known; a later
    ///     `rejectedTokenReissued` error carries it as its cause.
    /// - Returns: whether the cached token was dropped.
    @discardableResult
    package func invalidate(_ tokenValue: String, for scope: AuthorizationScope, rejection: TokenRejection? = nil)
        -> Bool
    {
        let dropped = shard(for: scope).withLock { state -> Bool in
            var rejected = state.rejected[scope] ?? []
            rejected.removeAll { $0.value == tokenValue }
            rejected.append(TokenEngineState.Rejected(value: tokenValue, rejection: rejection))
            if rejected.count > 4 { rejected.removeFirst() }
            state.rejected[scope] = rejected
            guard state.cache.peek(scope)?.token.value == tokenValue else { return false }
            state.cache.remove(scope)
            cachedCount.withLock { $0 -= 1 }
            publishState(of: scope, in: state)
            return true
        }
        emit(.invalidated(scope, fingerprint: AuthToken.fingerprint(of: tokenValue), dropped: dropped))
        return dropped
    }

    /// Drops every token, cooldown and in-flight fetch (sign-out). Waiting callers get
    /// `signedOut`; a fetch that completes later is discarded.
    package func invalidateAll() {
        var flights: [TokenEngineState.Flight] = []
        for shard in shards {
            flights += shard.withLock { state in
                let flights = Array(state.flights.values)
                if states.isWatched {
                    for scope in state.knownScopes {
                        states.publish(TokenState(scope: scope, phase: .signedOut, token: nil))
                    }
                }
                let dropped = state.cache.count
                cachedCount.withLock { $0 -= dropped }
                state.cache.removeAll()
                state.flights.removeAll()
                state.outages.removeAll()
                state.rejected.removeAll()
                return flights
            }
        }
        for flight in flights {
            flight.task?.cancel()
            for waiter in flight.waiters.values {
                waiter.resume(
                    throwing: FleetAuthError(
                        reason: .signedOut,
                        message: "Every token was invalidated (sign-out) while this fetch ran; sign in again and retry."
                    ))
            }
        }
        emit(.invalidatedAll)
    }

    // MARK: - Inspection

    /// The cached token for `scope`, whatever its freshness; `nil` if none. Never fetches
    /// and never suspends.
    package func cachedToken(for scope: AuthorizationScope) -> AuthToken? {
        shard(for: scope).withLock { $0.cache.peek(scope)?.token }
    }

    /// Counts of what the engine has done so far, and what it holds now.
    package var statistics: Statistics {
        var total = Statistics(fetches: 0, hits: 0, waits: 0, degradedServes: 0, cachedScopes: 0, activeFetches: 0)
        for shard in shards {
            shard.withLock { state in
                total.fetches += state.fetches
                total.hits += state.hits
                total.waits += state.waits
                total.degradedServes += state.degraded
                total.cachedScopes += state.cache.count
                total.activeFetches += state.flights.count
            }
        }
        total.hits += threadHits.withLock { $0.reduce(0) { $0 + $1.loadRelaxed() } }
        return total
    }

    /// Returns once no fetch task is running, background refreshes included (a fetch
    /// cancelled by ``invalidateAll()`` counts until its task has ended).
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = tracker.withLock { tracker -> Bool in
                if tracker.running == 0 { return true }
                tracker.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
