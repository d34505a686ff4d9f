/// What the engine has done and holds, read without changing anything.
extension TokenEngine {
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
}
