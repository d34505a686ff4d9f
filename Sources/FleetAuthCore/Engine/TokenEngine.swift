import Foundation

/// The caching and refreshing engine behind the driver and consumer providers.
///
/// Per scope (vehicle, trip) it keeps at most one cached token and one fetch in flight
/// (``Flight``), behind one lock (``TokenEngineState``). A fresh token is returned at once; a
/// stale one too, starting one background refresh; an expiring or missing one makes callers
/// share the one fetch in flight. A failed fetch fails all its waiters alike, and the scope's
/// ``FetchGate`` then says when it may ask the backend again. What happens to a scope is an
/// event on the state, decided under the lock and returning what the engine then does outside
/// it: a lookup (`TokenEngineState+Lookup`), a caller that waits, an attempt that fails, a
/// fetch that ends (`+Flights`), a flight admitted or queued for a slot (`+Slots`), a rejected
/// token and the sign-out (`+Invalidation`); how a scope stands is read in one place
/// (`TokenEngineState+Standing`). The engine's files perform those actions: getting tokens in
/// `+Lookup`, running the fetch and answering its callers in `+Flights`, fetches waiting for a slot
/// (``FetchSlots``) in `+Queue`, invalidation and sign-out in `+Invalidation`, token states
/// and the moments the clock changes them (``PhaseDeadlines``) in `+States`, waiting for the
/// engine in `+Waiting`, counts in `+Statistics`, tasks sharing their vehicle's token in
/// `+Tasks`; providers serving one scope from one endpoint are found by ``EngineRegistry``.
/// Nothing is called back under the lock.
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
    /// The endpoint and clock this engine shares with any other in the process
    /// (``EngineRegistry``), the scopes it recorded there, and whether it has warned of
    /// another provider serving one of them.
    let registryGroup: EngineRegistry.Group
    let registered = LockedState<(scopes: [AuthorizationScope], warned: Bool)>(([], false))

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
        self.state = LockedState(
            TokenEngineState(
                capacity: configuration.cacheCapacity, concurrentFetchLimit: configuration.concurrentFetchLimit))
        self.states = TokenStateBroadcaster(beforePublishing: configuration.beforePublishingState)
        self.tasksShareVehicleTokens = !configuration.endpoint.requestNamesTask
        self.registryGroup = EngineRegistry.group(of: configuration)
    }

    /// Runs `body` on the state with the lock held, then publishes the token states it
    /// changed, in the order they changed, once the lock is released.
    func withStateAndPublish<Result>(_ body: (inout TokenEngineState) -> Result) -> Result {
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

    func emit(_ detail: @autoclosure () -> TokenEvent.Detail) {
        if let observer { observer(TokenEvent(detail())) }
    }

    /// Warns, once, when another engine alive in this process serves `scope` from the same
    /// endpoint, and has every such engine warn too (an app often watches only its first
    /// provider): called as a fetch starts, for the first scopes it fetches
    /// (``EngineRegistry/scopesPerEngine``).
    func warnIfDuplicate(serving scope: AuthorizationScope) {
        let records = registered.withLock { registered -> Bool in
            // Recorded after this engine has warned too: another provider sharing a later
            // scope with it is told.
            guard registered.scopes.count < EngineRegistry.scopesPerEngine, !registered.scopes.contains(scope)
            else { return false }
            registered.scopes.append(scope)
            return true
        }
        guard records else { return }
        let serving = EngineRegistry.shared.add(self, serving: scope, in: registryGroup)
        guard serving.count > 1 else { return }
        for engine in serving { engine.warnOfDuplicates(serving: scope, providers: serving.count) }
    }

    /// Emits the duplicate-provider warning, the first time only.
    private func warnOfDuplicates(serving scope: AuthorizationScope, providers: Int) {
        let first = registered.withLock { registered in
            defer { registered.warned = true }
            return !registered.warned
        }
        if first { observer?(.duplicateProvider(scope, providers: providers)) }
    }

    deinit {
        state.withLock { $0.phaseClock?.task }?.cancel()
        let scopes = registered.withLock { $0.scopes }
        if !scopes.isEmpty { EngineRegistry.shared.remove(ObjectIdentifier(self), serving: scopes, in: registryGroup) }
        states.finish()
    }
}
