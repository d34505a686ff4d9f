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
        let dropped = withState { state -> Bool in
            var rejected = state.rejected[scope] ?? []
            rejected.removeAll { $0 == tokenValue }
            rejected.append(tokenValue)
            if rejected.count > 4 { rejected.removeFirst() }
            state.rejected[scope] = rejected
            state.boundPerScopeState()
            guard state.cache.peek(scope)?.token.value == tokenValue else { return false }
            state.cache.remove(scope)
            state.noteChange(of: scope, at: now)
            return true
        }
        emit(.invalidated(scope, fingerprint: AuthToken.fingerprint(of: tokenValue), dropped: dropped))
        return dropped
    }

    /// Drops every token, cooldown and in-flight fetch (sign-out). Waiting callers get
    /// `signedOut`; a fetch that completes later is discarded.
    package func invalidateAll() {
        let flights = withState { state in
            for scope in state.knownScopes { state.note(TokenState(scope: scope, phase: .signedOut, token: nil)) }
            let flights = Array(state.flights.values)
            state.cache.removeAll()
            state.flights.removeAll()
            state.outages.removeAll()
            state.rejected.removeAll()
            return flights
        }
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
