import Foundation

extension TokenEngine {
    /// Drops `tokenValue` for `scope`, which the fleet service rejected (401/403), if it is
    /// still the cached one (a late rejection of an older token causes no second refetch).
    /// The value is remembered either way: a fetch that returns it fails with
    /// `rejectedTokenReissued`. Returns whether it was dropped. For a task that shares its
    /// vehicle's token, a value the task does not hold is the vehicle's: it is dropped for
    /// the vehicle and every task it served.
    @discardableResult
    package func invalidate(_ tokenValue: String, for scope: AuthorizationScope) -> Bool {
        if let vehicle = vehicleScope(sharedBy: scope),
            state.withLock({ $0.cache.peek(scope)?.token.value != tokenValue })
        {
            return invalidate(tokenValue, for: vehicle)
        }
        let now = clock.uptime()
        let wallNow = clock.now()
        let randomUnit = fetcher.randomUnit()
        let retry = configuration.retry
        let dropped = withStateAndPublish { state in
            state.tokenRejected(
                tokenValue, for: scope, at: now, wallNow: wallNow, retry: retry, randomUnit: randomUnit)
        }
        emit(.invalidated(scope, fingerprint: AuthToken.fingerprint(of: tokenValue), dropped: dropped))
        return dropped
    }

    /// Drops every token, cooldown, backoff and in-flight fetch (sign-out). Waiting callers get
    /// `signedOut`; a fetch that completes later is discarded. Every scope then stands
    /// `signedOut` until the app next asks for a token.
    package func invalidateAll() {
        let watched = states.watchedScopes
        let flights = withStateAndPublish { $0.signOut(alsoNoting: watched) }
        let signedOut = FleetAuthError(
            reason: .signedOut,
            message: "Every token was invalidated (sign-out) while this fetch ran; sign in again and retry.")
        for flight in flights {
            flight.task?.cancel()
            for waiter in flight.waiters.values { waiter.resume(with: .failure(signedOut)) }
        }
        wakeAnsweredCallers()
        emit(.invalidatedAll)
    }
}
