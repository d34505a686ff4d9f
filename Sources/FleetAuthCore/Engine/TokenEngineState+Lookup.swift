import Foundation

/// A lookup as an event on the engine's state: what the cache holds for a scope now, and the
/// background refresh a stale or degraded token starts.
extension TokenEngineState {
    /// What a lookup found in the cache.
    enum Lookup {
        case fresh(AuthToken)
        /// Stale, with the ID of the background refresh it started, if any.
        case stale(AuthToken, refresh: UInt64?)
        /// Below the minimum remaining lifetime but above the outage floor while the
        /// backend fails for a transient reason (the error).
        indirect case degraded(AuthToken, FleetAuthError, refresh: UInt64?)
        case miss
    }

    /// Looks `scope` up at uptime `now`: a fresh or stale token is served, and so is one
    /// above its outage floor while the scope's last attempt failed for a transient
    /// reason; stale and degraded lookups start a background refresh if none runs.
    mutating func lookUp(_ scope: AuthorizationScope, at now: TimeInterval) -> Lookup {
        guard let (token, freshness, aboveFloor) = cache.use(scope, at: now) else { return .miss }
        switch freshness {
        case .fresh:
            hits &+= 1
            return .fresh(token)
        case .stale:
            hits &+= 1
            return .stale(token, refresh: startFlightIfIdle(scope, now: now))
        case .expiring:
            guard aboveFloor, let failures = gates[scope]?.failures, failures.error.isTransient else { return .miss }
            hits &+= 1
            degraded &+= 1
            return .degraded(token, failures.error, refresh: startFlightIfIdle(scope, now: now))
        }
    }

    /// Claims the scope's flight slot for a fetch with no waiter yet (a background
    /// refresh), unless a fetch already runs or the scope is cooling down after a failure.
    /// - Returns: the new flight's ID.
    mutating func startFlightIfIdle(_ scope: AuthorizationScope, now: TimeInterval) -> UInt64? {
        guard flights[scope] == nil else { return nil }
        if let gate = gates[scope], !gate.allowsRequest(at: now) { return nil }
        let flightID = nextID()
        flights[scope] = Flight(id: flightID, startedAt: now)
        fetches += 1
        // Noted with the flight, so that streams hear it before the flight's outcome.
        noteChange(of: scope, at: now)
        return flightID
    }

    /// Ends the sign-out: the app asks for a token for `asked` again. Every other scope that
    /// stood `signedOut` now stands as it is (`noToken` until it is fetched); `asked` is
    /// noted with its fetch.
    mutating func signIn(asking asked: AuthorizationScope, at now: TimeInterval) {
        signedOut = false
        let scopes = signedOutScopes
        signedOutScopes = []
        for scope in scopes where scope != asked { noteChange(of: scope, at: now) }
    }
}
