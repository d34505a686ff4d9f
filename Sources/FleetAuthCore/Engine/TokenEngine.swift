import Foundation

/// The caching and refreshing engine behind the driver and consumer providers.
///
/// Per scope (vehicle, trip) it keeps at most one cached token and one fetch in flight,
/// behind one lock (``TokenEngineState``). A fresh token is returned at once; a stale one too,
/// starting one background refresh; an expiring or missing one makes callers share the one
/// fetch in flight. A failed fetch fails all its waiters alike, and the scope then fails fast
/// for ``RetryPolicy/failureCooldown``. Lookups are here; fetches in `+Flights`, invalidation
/// in `+Invalidation`, states and statistics in `+Observation`. Nothing is called back under
/// the lock.
@usableFromInline
package final class TokenEngine: Sendable {
    package let configuration: TokenProviderConfiguration
    let fetcher: TokenFetcher
    let clock: any WallClock
    let observer: (@Sendable (TokenEvent) -> Void)?
    /// Everything that changes, behind one lock.
    let state: LockedState<TokenEngineState>
    /// Whether the endpoint's request leaves the task out (no `{taskId}`, no task query item,
    /// no body), so the backend mints a task context the same token as its vehicle: a task
    /// then shares its vehicle's token when that token covers it (see `+Tasks`).
    let tasksShareVehicleTokens: Bool
    /// The streams of ``TokenState`` changes apps watch.
    let states: TokenStateBroadcaster
    /// Held while publishing token states, so that changes noted under ``state`` by
    /// different threads reach the streams in the order they were noted, none dropped.
    /// A bare lock: it guards no value, only the order of publishing.
    let publication = NSLock()

    /// Creates an engine; throws `invalidConfiguration` for unusable policies.
    package init(configuration: TokenProviderConfiguration) throws(FleetAuthError) {
        try configuration.refresh.validate()
        try configuration.retry.validate()
        try configuration.endpoint.validate()
        guard configuration.cacheCapacity >= 1 else {
            throw FleetAuthError(reason: .invalidConfiguration, message: "cacheCapacity must be at least 1.")
        }
        self.configuration = configuration
        self.clock = configuration.clock
        let observer = configuration.observer
        self.observer = observer
        // A simulated clock draws from a fixed seed, so that tests see the same jitter and
        // refresh spread on every run.
        var randomUnit: @Sendable () -> Double = { Double.random(in: 0...1) }
        if let simulated = configuration.clock as? any SimulatedClock { randomUnit = { simulated.randomUnit() } }
        self.fetcher = TokenFetcher(
            endpoint: configuration.endpoint, transport: configuration.transport, clock: configuration.clock,
            refresh: configuration.refresh, retry: configuration.retry, rules: configuration.rules,
            emit: { detail in observer?(TokenEvent(detail)) }, randomUnit: randomUnit)
        self.state = LockedState(TokenEngineState(capacity: configuration.cacheCapacity))
        self.states = TokenStateBroadcaster(beforePublishing: configuration.beforePublishingState)
        self.tasksShareVehicleTokens = !configuration.endpoint.requestNamesTask
    }

    // MARK: - Getting tokens

    /// A token for `scope`: a usable cached one at once, without suspending or leaving the
    /// caller's executor; otherwise from the shared fetch. Throws ``FleetAuthError``, or
    /// `CancellationError` when the caller is cancelled while waiting (the fetch goes on).
    @usableFromInline
    nonisolated(nonsending) package func token(for scope: AuthorizationScope) async throws -> AuthToken {
        if let token = cachedUsableToken(for: scope) { return token }
        let scope = try scope.validated()
        if let vehicle = vehicleScope(sharedBy: scope) {
            // The request would be the vehicle's: its token serves the task if it covers it.
            let token = try await token(for: vehicle)
            if token.claims.covers(scope) { return token }
        }
        return try await waitForFetch(scope)
    }

    /// A new token for `scope`, whatever the cache holds: joins the fetch in flight, or
    /// starts one. The cached token stays in use for other callers until the new one
    /// arrives; if the fetch fails, this throws and the cached token is kept.
    package func refreshedToken(for scope: AuthorizationScope) async throws -> AuthToken {
        let scope = servingScope(for: try scope.validated())
        // Asked by the app: any backoff starts over.
        withState { $0.gates[scope]?.restart() }
        return try await waitForFetch(scope, forced: true)
    }

    /// The cached token for `scope` if it can be handed out now (fresh; stale with a
    /// background refresh started; or degraded, above its outage floor while the backend
    /// fails for a transient reason); `nil` when a caller would have to wait for a fetch.
    /// Never suspends: for callers that must not. Invalid scopes simply miss.
    @usableFromInline
    package func cachedUsableToken(for scope: AuthorizationScope) -> AuthToken? {
        let now = clock.uptime()
        if let vehicle = vehicleScope(sharedBy: scope),
            let token = cachedVehicleToken(vehicle, covering: scope, at: now)
        {
            return token
        }
        let lookup = state.withLock { $0.lookUp(scope, at: now) }
        return deliver(lookup, for: scope, at: now)
    }

    /// Emits the events of a lookup, starts the refresh it claimed, and returns its token.
    func deliver(_ lookup: TokenEngineState.Lookup, for scope: AuthorizationScope, at now: TimeInterval)
        -> AuthToken?
    {
        switch lookup {
        case .fresh(let token):
            emit(.servedFresh(scope, fingerprint: token.fingerprint))
            return token
        case .stale(let token, let refresh):
            startRefresh(refresh, for: scope)
            emit(.servedStale(scope, fingerprint: token.fingerprint))
            return token
        case .degraded(let token, let reason, let refresh):
            startRefresh(refresh, for: scope)
            emit(
                .servedDegraded(
                    scope, fingerprint: token.fingerprint, remaining: remaining(token, at: now), reason: reason))
            return token
        case .miss:
            return nil
        }
    }

    private func startRefresh(_ flightID: UInt64?, for scope: AuthorizationScope) {
        guard let flightID else { return }
        emit(.refreshScheduled(scope))
        launch(flight: flightID, for: scope)
    }

    /// Seconds of life `token` has left at uptime `now`.
    func remaining(_ token: AuthToken, at now: TimeInterval) -> TimeInterval {
        (token.expiresAtUptime ?? token.expiresAt.timeIntervalSince1970) - now
    }

    /// Runs `body` on the state with the lock held, then publishes the token states it
    /// changed, in the order they changed, once the lock is released.
    func withState<Result>(_ body: (inout TokenEngineState) -> Result) -> Result {
        let watched = states.isWatched
        let (result, noted) = state.withLock { state in
            state.watched = watched
            let result = body(&state)
            return (result, !state.changes.isEmpty)
        }
        // Changes left by other threads are theirs to publish.
        if noted { publishChanges() }
        return result
    }

    /// Publishes every token state noted so far and not yet published, in the order noted:
    /// a thread that finds its changes already taken leaves them to the one publishing.
    func publishChanges() {
        publication.lock()
        defer { publication.unlock() }
        let changes = state.withLock { state in
            defer { state.changes.removeAll() }
            return state.changes
        }
        for change in changes { states.publish(change.state, sequence: change.sequence) }
    }

    func emit(_ detail: @autoclosure () -> TokenEvent.Detail) {
        if let observer { observer(TokenEvent(detail())) }
    }

    deinit {
        states.finish()
    }
}
