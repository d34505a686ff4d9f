import Foundation

/// The caching and refreshing engine behind the driver and consumer providers.
///
/// One engine serves many scopes (vehicles, trips). Per scope it keeps at most one cached
/// token and at most one fetch in flight:
/// - a fresh token is returned at once without suspending: from the calling thread's own
///   line when the thread keeps asking for the scope (``ThreadTokenCache``: no lock, no
///   write to shared memory), else under the shard's lock;
/// - a stale token is returned at once and one background refresh starts;
/// - an expiring or missing token makes callers wait for the single in-flight fetch,
///   which every concurrent caller shares (N callers, one request);
/// - a failed fetch fails all its waiters with the same error, and the scope then fails
///   fast for ``RetryPolicy/failureCooldown`` so a down backend sees no request storm.
///
/// Scopes are spread over shards by a hash of their ID (16 shards from a capacity of 256,
/// one below), each with its own lock, so lookups for different vehicles do not contend.
///
/// Completion order and threads: results are delivered by resuming the callers'
/// continuations after the lock is released; nothing is called back under a lock.
@usableFromInline
package final class TokenEngine: Sendable {
    /// The configuration type, which providers expose under their own name.
    package typealias Configuration = TokenProviderConfiguration
    /// The statistics type, which providers expose under their own name.
    package typealias Statistics = TokenStatistics

    /// The configuration the engine was made with.
    package let configuration: Configuration
    let fetcher: TokenFetcher
    // Hoisted out of `configuration` for the lookup fast path.
    let clock: any WallClock
    /// Whether ``clock`` is the system's: the lookup then reads its uptime directly.
    let clockIsSystem: Bool
    let observer: (@Sendable (TokenEvent) -> Void)?
    let shards: [LockedState<TokenEngineState>]
    /// Each shard's ``ScopeTable/location`` word, read without the lock to start loading a
    /// scope's record early. The words belong to the shards' tables, which live as long as
    /// the engine.
    let recordLocations: [AtomicWord]
    let tracker = LockedState(FlightTracker())
    /// The streams of ``TokenState`` changes apps watch.
    let states = TokenStateBroadcaster()
    /// Tokens cached over all shards. Taken inside a shard's lock, never the other way.
    let cachedCount = LockedState(0)
    /// This engine's number, unique in the process: threads' copies of its tokens
    /// (``ThreadTokenCache``) are keyed by it, so an engine at a dead one's address never
    /// finds the dead one's copies.
    let id = TokenEngine.nextID.withLock {
        $0 += 1
        return $0
    }
    private static let nextID = LockedState<UInt64>(0)
    /// The thread-local key of ``ThreadTokenCache``, read here without a lazy global's check.
    let threadCacheKey = ThreadTokenCache.key
    /// The hits each thread served from its own copies, which ``statistics`` adds up.
    let threadHits = LockedState<[AtomicWord]>([])

    /// Creates an engine; throws `invalidConfiguration` for unusable policies.
    package init(configuration: Configuration) throws(FleetAuthError) {
        try configuration.refresh.validate()
        try configuration.retry.validate()
        try configuration.endpoint.validate()
        guard configuration.cacheCapacity >= 1 else {
            throw FleetAuthError(reason: .invalidConfiguration, message: "cacheCapacity must be at least 1.")
        }
        self.configuration = configuration
        self.clock = configuration.clock
        self.clockIsSystem = configuration.clock is SystemWallClock
        let observer = configuration.observer
        self.observer = observer
        self.fetcher = TokenFetcher(
            endpoint: configuration.endpoint, transport: configuration.transport, clock: configuration.clock,
            refresh: configuration.refresh, retry: configuration.retry, rules: configuration.rules,
            emit: { detail in observer?(TokenEvent(detail)) })
        // Every shard may hold up to the whole capacity; `cachedCount` keeps the total to it.
        let shardCount = configuration.cacheCapacity >= 256 ? 16 : 1
        let capacity = configuration.cacheCapacity
        let caches = (0..<shardCount).map { _ in TokenCache(capacity: capacity) }
        self.recordLocations = caches.map(\.recordLocation)
        self.shards = caches.map { LockedState(TokenEngineState(cache: $0)) }
    }

    /// The shard that owns `scope`, by the hash the scope computed when it was made (the
    /// shard count is 1 or 16). The hash's high bits pick the shard; the cache's index uses
    /// its low bits, so the two do not correlate.
    @inline(__always)
    func shard(for scope: AuthorizationScope) -> LockedState<TokenEngineState> {
        shards[shardIndex(of: scope)]
    }

    /// Runs `body` on `scope`'s shard's state with its lock held, like
    /// `shard(for: scope).withLock(body)` without counting a reference to the shard (the
    /// engine holds them all for its life): the lookup path's way in.
    @inline(__always)
    private func withShard<Result>(of scope: AuthorizationScope, _ body: (inout TokenEngineState) -> Result) -> Result {
        Unmanaged.passUnretained(shards[shardIndex(of: scope)])._withUnsafeGuaranteedRef { $0.withLock(body) }
    }

    @inline(__always)
    private func shardIndex(of scope: AuthorizationScope) -> Int {
        Int(truncatingIfNeeded: UInt(bitPattern: scope.hashCode) >> 60) & (shards.count - 1)
    }

    /// Starts loading `scope`'s record in its shard's table.
    @inline(__always)
    private func prefetchRecord(of scope: AuthorizationScope) {
        ScopeTable.prefetchRecord(of: scope, location: recordLocations[shardIndex(of: scope)].address)
    }

    // MARK: - Getting tokens

    #if compiler(>=6.2)
        /// A token for `scope` with at least the minimum remaining lifetime.
        ///
        /// Returns at once for a fresh or stale cached token, without suspending and without
        /// leaving the caller's executor (where the compiler supports it); otherwise waits for
        /// the shared fetch. Throws ``FleetAuthError`` or, if the calling task is cancelled
        /// while waiting, `CancellationError` (the fetch goes on for other callers).
        @usableFromInline
        nonisolated(nonsending) package func token(for scope: AuthorizationScope) async throws -> AuthToken {
            if let token = cachedUsableToken(for: scope) { return token }
            return try await waitForFetch(try scope.validated())
        }
    #else
        /// A token for `scope` with at least the minimum remaining lifetime.
        ///
        /// Returns at once for a fresh or stale cached token, without suspending and without
        /// leaving the caller's executor (where the compiler supports it); otherwise waits for
        /// the shared fetch. Throws ``FleetAuthError`` or, if the calling task is cancelled
        /// while waiting, `CancellationError` (the fetch goes on for other callers).
        @usableFromInline
        package func token(for scope: AuthorizationScope) async throws -> AuthToken {
            if let token = cachedUsableToken(for: scope) { return token }
            return try await waitForFetch(try scope.validated())
        }
    #endif

    /// The cached token for `scope` if it can be handed out now (fresh; stale with a
    /// background refresh started; or degraded, above its outage floor while the backend
    /// fails for a transient reason); `nil` when a caller would have to wait for a fetch.
    /// Never suspends: for callers that must not.
    @usableFromInline
    package func cachedUsableToken(for scope: AuthorizationScope) -> AuthToken? {
        // The thread's own copy while the slot is unchanged: no lock, no shared write.
        let lines = ThreadTokenCache.currentLines(key: threadCacheKey)
        let line = ThreadTokenCache.line(in: lines, engineID: id, holding: scope)
        let now = uptime(prefetchingUnless: line, scope)
        if let line, ThreadTokenCache.serves(line, scope, at: now), let token = line.pointee.token {
            emit(.servedFresh(scope, fingerprint: token.fingerprint))
            return token
        }
        return lookUpShared(scope, at: now, lines: lines)
    }

    /// The value of ``cachedUsableToken(for:)``: what every authorized call needs, handed
    /// out with one reference count.
    @usableFromInline
    package func cachedUsableValue(for scope: AuthorizationScope) -> String? {
        let lines = ThreadTokenCache.currentLines(key: threadCacheKey)
        let line = ThreadTokenCache.line(in: lines, engineID: id, holding: scope)
        let now = uptime(prefetchingUnless: line, scope)
        if let line, ThreadTokenCache.serves(line, scope, at: now) {
            // Read before the observer runs: it may look tokens up itself and refill the line.
            let value = line.pointee.value
            emit(.servedFresh(scope, fingerprint: AuthToken.fingerprint(of: value)))
            return value
        }
        return lookUpSharedValue(scope, at: now, lines: lines)
    }

    /// The uptime now. Without a thread line holding `scope` (the lookup will go to the
    /// shard), it first starts loading the scope's record there: on a lookup spread over
    /// many scopes, the record's cache miss then overlaps the clock read and the work
    /// before the shard's lock.
    @inline(__always)
    private func uptime(
        prefetchingUnless line: UnsafeMutablePointer<ThreadTokenCache.Line>?, _ scope: AuthorizationScope
    ) -> TimeInterval {
        if line == nil { prefetchRecord(of: scope) }
        return clockIsSystem ? SystemWallClock.uptime() : clock.uptime()
    }

    /// ``lookUpShared(_:at:lines:)`` for the value alone: a fresh token's storage is not
    /// touched.
    @inline(never)
    private func lookUpSharedValue(
        _ scope: AuthorizationScope, at now: TimeInterval, lines: UnsafeMutablePointer<ThreadTokenCache.Line>?
    ) -> String? {
        let wantsFill = shouldFill(scope, lines: lines)
        var slot: TokenCache.SlotVersion?
        let value = withShard(of: scope) { state -> String? in
            guard let value = state.lookUpFreshValue(scope, at: now) else { return nil }
            if wantsFill { slot = state.cache.slotVersion(of: scope, at: now) }
            return value
        }
        guard let value else { return lookUpShared(scope, at: now, wantsFill: wantsFill)?.value }
        if let slot { fill(scope, from: slot) }
        emit(.servedFresh(scope, fingerprint: AuthToken.fingerprint(of: value)))
        return value
    }

    /// A lookup the thread's lines could not serve: one hash lookup under the shard's lock
    /// (invalid scopes simply miss), filling the thread's line when the scope comes back.
    @inline(never)
    private func lookUpShared(
        _ scope: AuthorizationScope, at now: TimeInterval, lines: UnsafeMutablePointer<ThreadTokenCache.Line>?
    ) -> AuthToken? {
        lookUpShared(scope, at: now, wantsFill: shouldFill(scope, lines: lines))
    }

    /// ``lookUpShared(_:at:lines:)`` with the fill decision already taken.
    private func lookUpShared(_ scope: AuthorizationScope, at now: TimeInterval, wantsFill: Bool) -> AuthToken? {
        var slot: TokenCache.SlotVersion?
        let lookup = withShard(of: scope) { state in
            let lookup = state.lookUp(scope, at: now)
            if wantsFill, case .fresh = lookup { slot = state.cache.slotVersion(of: scope, at: now) }
            return lookup
        }
        // A slot version comes only with a fresh lookup.
        if let slot { fill(scope, from: slot) }
        return deliver(lookup, for: scope, at: now)
    }

    /// Whether a shard hit for `scope` should fill its line among the calling thread's
    /// `lines` (``ThreadTokenCache/wantsFill(in:engineID:scope:)``). A thread without lines
    /// makes them now and fills nothing yet.
    @inline(__always)
    private func shouldFill(_ scope: AuthorizationScope, lines: UnsafeMutablePointer<ThreadTokenCache.Line>?) -> Bool {
        ThreadTokenCache.wantsFill(
            in: lines ?? ThreadTokenCache.current(key: threadCacheKey).lines, engineID: id, scope: scope)
    }

    /// Fills `scope`'s line among the calling thread's lines from `slot`.
    private func fill(_ scope: AuthorizationScope, from slot: TokenCache.SlotVersion) {
        ThreadTokenCache.current(key: threadCacheKey).fill(engine: self, scope: scope, slot: slot)
    }

    /// Emits the events of a lookup, starts the refresh it claimed, and returns its token.
    private func deliver(_ lookup: TokenEngineState.Lookup, for scope: AuthorizationScope, at now: TimeInterval)
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
    private func remaining(_ token: AuthToken, at now: TimeInterval) -> TimeInterval {
        (token.expiresAtUptime ?? token.expiresAt.timeIntervalSince1970) - now
    }

    /// Registers the caller as a waiter of the scope's fetch, starting one if none runs.
    private func waitForFetch(_ scope: AuthorizationScope) async throws -> AuthToken {
        let shard = shard(for: scope)
        let waiterID = shard.withLock { $0.nextID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: TokenEngineState.Waiter) in
                enum Registration {
                    case joined
                    case started(UInt64)
                    case served(TokenEngineState.Lookup)
                    case replayed(FleetAuthError)
                    case cancelled
                }
                let now = clock.uptime()
                let registration: Registration = shard.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    // Re-check under the lock: a fetch may have finished since the fast path.
                    let lookup = state.lookUp(scope, at: now)
                    if case .miss = lookup {} else { return .served(lookup) }
                    if let outage = state.outages[scope] {
                        if let flight = state.flights[scope], flight.retriesInBackground {
                            // The backend is down and a flight keeps retrying: fail fast.
                            state.flights[scope]?.demanded = true
                            return .replayed(outage.failure(at: now))
                        }
                        if state.flights[scope] == nil, outage.replayUntil > now {
                            return .replayed(outage.failure(at: now))
                        }
                    }
                    state.waits += 1
                    if let flight = state.flights[scope] {
                        // The first waiter since the flight had none (a background refresh,
                        // or one whose earlier waiters were answered) starts a new budget.
                        if flight.waiters.isEmpty { state.flights[scope]?.waitedSince = now }
                        state.flights[scope]?.waiters[waiterID] = continuation
                        return .joined
                    }
                    let flightID = state.nextID()
                    state.flights[scope] = TokenEngineState.Flight(
                        id: flightID, startedAt: now, waitedSince: now, waiters: [waiterID: continuation])
                    state.fetches += 1
                    return .started(flightID)
                }
                switch registration {
                case .joined: break
                case .started(let flightID): launch(flight: flightID, for: scope)
                case .served(let lookup):
                    if let token = deliver(lookup, for: scope, at: now) { continuation.resume(returning: token) }
                case .replayed(let error):
                    emit(.failureReplayed(scope, error: error))
                    continuation.resume(throwing: error)
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = shard.withLock { $0.flights[scope]?.waiters.removeValue(forKey: waiterID) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Starts the task that runs flight `flightID` and records it in the slot.
    private func launch(flight flightID: UInt64, for scope: AuthorizationScope) {
        tracker.withLock { $0.running += 1 }
        let task = Task { await self.run(flight: flightID, for: scope) }
        let orphaned = shard(for: scope).withLock { state -> Bool in
            guard state.flights[scope]?.id == flightID else { return true }
            state.flights[scope]?.task = task
            publishState(of: scope, in: state)
            return false
        }
        if orphaned { task.cancel() }
    }

    /// Fetches, then stores the outcome and answers every waiter — only if the slot
    /// still belongs to this flight (`invalidateAll()` may have taken it).
    private func run(flight flightID: UInt64, for scope: AuthorizationScope) async {
        let started = clock.uptime()
        // Waiters' budget runs from when the fetch really starts.
        shard(for: scope).withLock { state in
            guard state.flights[scope]?.id == flightID, let since = state.flights[scope]?.waitedSince else { return }
            state.flights[scope]?.waitedSince = max(since, started)
        }
        let waitersDeadline = configuration.retry.deadline
        var result = await fetcher.fetch(
            scope,
            deadline: {
                // Waiters within their budget bound the attempt; a background retry is not.
                shard(for: scope).withLock { state in
                    guard let flight = state.flights[scope], flight.id == flightID, !flight.waiters.isEmpty,
                        !flight.retriesInBackground, let waitedSince = flight.waitedSince
                    else { return .infinity }
                    return waitedSince + waitersDeadline
                }
            },
            shouldRetry: { error, attempt, retryAt in
                attemptFailed(flight: flightID, for: scope, error: error, attempt: attempt, retryAt: retryAt)
            })
        let now = clock.uptime()
        let refresh = configuration.refresh
        let allowance = tracker.withLock { tracker -> TimeInterval in
            if case .success = result { tracker.recordFetch(duration: now - started) }
            return refresh.adaptiveAllowance(
                slowestFetch: tracker.slowestRecentFetch, retry: configuration.retry, randomUnit: fetcher.randomUnit())
        }
        var evicted: AuthorizationScope?
        let waiters: [TokenEngineState.Waiter]? = shard(for: scope).withLock { state in
            guard let flight = state.flights[scope], flight.id == flightID else { return nil }
            state.flights[scope] = nil
            if case .success(let token) = result,
                let rejected = state.rejected[scope]?.first(where: { $0.value == token.value })
            {
                let message =
                    if let rejection = rejected.rejection {
                        "The fleet service refused this token (\(rejection)), and asked for a new one the backend returned the same token, so a refetch cannot fix it: fix what the fleet service names (audience, claim key, IDs, project) in the backend's minting."
                    } else {
                        "The backend returned the token the fleet service had just rejected; it must mint a new token when asked again."
                    }
                result = .failure(
                    FleetAuthError(
                        reason: .rejectedTokenReissued, message: message, scope: scope,
                        status: rejected.rejection?.status, underlyingError: rejected.rejection))
            }
            switch result {
            case .success(let token):
                let previous = state.cache.peek(scope)
                let entry = TokenCache.Entry(
                    token: token, policy: refresh, allowance: allowance, lookupInterval: previous?.lookupInterval ?? 0)
                evicted = state.cache.store(entry, for: scope)
                if previous == nil, evicted == nil,
                    cachedCount.withLock({
                        $0 += 1; return $0
                    }) > configuration.cacheCapacity,
                    let victim = state.cache.evictOne(sparing: scope)
                {
                    evicted = victim
                    cachedCount.withLock { $0 -= 1 }
                }
                state.outages[scope] = nil
            case .failure(let error):
                var outage = state.outages[scope] ?? TokenEngineState.Outage(since: now, error: error)
                outage.error = error
                outage.replayUntil = now + configuration.retry.failureCooldown
                state.outages[scope] = outage
                result = .failure(outage.failure(at: now))
            }
            publishState(of: scope, in: state, at: now)
            if let evicted { publishState(of: evicted, in: state, at: now) }
            return Array(flight.waiters.values)
        }
        if let evicted { emit(.evicted(evicted)) }
        for waiter in waiters ?? [] { waiter.resume(with: result.mapError { $0 as any Error }) }
        for waiter in tracker.withLock({ $0.finish() }) { waiter.resume() }
    }

    /// Records a failed attempt of flight `flightID` and decides whether another follows at
    /// uptime `retryAt`. Its waiters get the cached token degraded when the failure is
    /// transient and the token is above its outage floor, or the error once they have had
    /// the retry policy's attempts and deadline. The flight keeps retrying a transient
    /// failure while the cached token stays usable until `retryAt`, while waiters are
    /// within their budget, or while callers keep asking for the scope.
    private func attemptFailed(
        flight flightID: UInt64, for scope: AuthorizationScope, error: FleetAuthError, attempt: Int,
        retryAt: TimeInterval
    ) -> Bool {
        let now = clock.uptime()
        let retry = configuration.retry
        let (retries, served, failed): (Bool, (AuthToken, [TokenEngineState.Waiter])?, [TokenEngineState.Waiter]) =
            shard(for: scope).withLock { state in
                guard var flight = state.flights[scope], flight.id == flightID else { return (false, nil, []) }
                var outage = state.outages[scope] ?? TokenEngineState.Outage(since: now, error: error)
                outage.error = error
                state.outages[scope] = outage
                let entry = state.cache.peek(scope)
                let budgetSpent =
                    !error.isTransient || attempt >= retry.maximumAttempts
                    || retryAt >= (flight.waitedSince ?? flight.startedAt) + retry.deadline
                if budgetSpent { flight.retriesInBackground = true }
                var served: (AuthToken, [TokenEngineState.Waiter])?
                var failed: [TokenEngineState.Waiter] = []
                if !flight.waiters.isEmpty {
                    if error.isTransient, let entry, now < entry.floorAt {
                        served = (entry.token, Array(flight.waiters.values))
                        state.hits &+= flight.waiters.count
                        state.degraded &+= flight.waiters.count
                        flight.waiters = [:]
                    } else if budgetSpent {
                        failed = Array(flight.waiters.values)
                        flight.waiters = [:]
                    }
                }
                let usable = entry.map { retryAt < $0.floorAt } ?? false
                let retries = error.isTransient && (!flight.waiters.isEmpty || usable || flight.demanded)
                flight.demanded = false
                state.flights[scope] = flight
                publishState(of: scope, in: state, at: now)
                return (retries, served, failed)
            }
        if let (token, waiters) = served {
            for waiter in waiters {
                emit(
                    .servedDegraded(
                        scope, fingerprint: token.fingerprint, remaining: remaining(token, at: now), reason: error))
                waiter.resume(returning: token)
            }
        }
        if !failed.isEmpty {
            let failure = shard(for: scope).withLock { $0.outages[scope]?.failure(at: now) } ?? error
            for waiter in failed { waiter.resume(throwing: failure) }
        }
        return retries
    }

    func emit(_ detail: @autoclosure () -> TokenEvent.Detail) {
        if let observer { observer(TokenEvent(detail())) }
    }

    /// Tells the streams watching `scope` how its token stands, when any is open. Called
    /// with the scope's shard locked, right after a change, so states arrive in order.
    func publishState(of scope: AuthorizationScope, in state: TokenEngineState, at now: TimeInterval? = nil) {
        guard states.isWatched else { return }
        states.publish(state.tokenState(of: scope, at: now ?? clock.uptime()))
    }

    deinit {
        states.finish()
    }
}
