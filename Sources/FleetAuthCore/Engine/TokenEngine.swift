import Foundation

/// The caching and refreshing engine behind the driver and consumer providers.
///
/// One engine serves many scopes (vehicles, trips). Per scope it keeps at most one cached
/// token and at most one fetch in flight:
/// - a fresh token is returned at once, under a lock, without suspending;
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
public final class TokenEngine: Sendable {
    /// The configuration the engine was made with.
    public let configuration: Configuration
    let fetcher: TokenFetcher
    // Hoisted out of `configuration` for the lookup fast path.
    let clock: any WallClock
    let observer: (@Sendable (TokenEvent) -> Void)?
    let shards: [LockedState<TokenEngineState>]
    let tracker = LockedState(FlightTracker())
    /// Tokens cached over all shards. Taken inside a shard's lock, never the other way.
    let cachedCount = LockedState(0)

    /// Creates an engine; throws `invalidConfiguration` for unusable policies.
    public init(configuration: Configuration) throws(FleetAuthError) {
        try configuration.refresh.validate()
        try configuration.retry.validate()
        try configuration.endpoint.validate(for: nil)
        guard configuration.cacheCapacity >= 1 else {
            throw FleetAuthError(code: .invalidConfiguration, message: "cacheCapacity must be at least 1.")
        }
        self.configuration = configuration
        self.clock = configuration.clock
        let observer = configuration.observer
        self.observer = observer
        self.fetcher = TokenFetcher(
            endpoint: configuration.endpoint, transport: configuration.transport, clock: configuration.clock,
            refresh: configuration.refresh, retry: configuration.retry, rules: configuration.rules,
            emit: { event in observer?(event) })
        // Every shard may hold up to the whole capacity; `cachedCount` keeps the total to it.
        let shardCount = configuration.cacheCapacity >= 256 ? 16 : 1
        let capacity = configuration.cacheCapacity
        self.shards = (0..<shardCount).map { _ in LockedState(TokenEngineState(cache: TokenCache(capacity: capacity))) }
    }

    /// The shard that owns `scope`: a mix of the ID's length and last bytes, where IDs
    /// differ most (`vehicle-17`, `vehicle-18`), far cheaper than hashing the whole ID.
    @inline(__always)
    func shard(for scope: AuthorizationScope) -> LockedState<TokenEngineState> {
        guard shards.count > 1 else { return shards[0] }
        let mix =
            scope.id.utf8.withContiguousStorageIfAvailable { bytes -> UInt32 in
                var mix = UInt32(truncatingIfNeeded: bytes.count)
                for byte in bytes.suffix(4) { mix = (mix &* 31) &+ UInt32(byte) }
                return mix ^ (mix >> 7)
            } ?? UInt32(truncatingIfNeeded: scope.id.hashValue)
        return shards[Int(mix % UInt32(shards.count))]
    }

    // MARK: - Getting tokens

    #if compiler(>=6.2)
        /// A token for `scope` with at least the minimum remaining lifetime.
        ///
        /// Returns at once for a fresh or stale cached token, without suspending and without
        /// leaving the caller's executor (where the compiler supports it); otherwise waits for
        /// the shared fetch. Throws ``FleetAuthError`` or, if the calling task is cancelled
        /// while waiting, `CancellationError` (the fetch goes on for other callers).
        nonisolated(nonsending) public func token(for scope: AuthorizationScope) async throws -> AuthToken {
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
        public func token(for scope: AuthorizationScope) async throws -> AuthToken {
            if let token = cachedUsableToken(for: scope) { return token }
            return try await waitForFetch(try scope.validated())
        }
    #endif

    /// The cached token for `scope` if it can be handed out now (fresh, or stale with a
    /// background refresh started); `nil` when a caller would have to wait for a fetch.
    /// Never suspends: for callers that must not.
    public func cachedUsableToken(for scope: AuthorizationScope) -> AuthToken? {
        let now = clock.uptime()
        enum FastPath {
            case fresh(AuthToken)
            case stale(AuthToken, refresh: UInt64?)
            case miss
        }
        // One hash lookup under the shard's lock; invalid scopes simply miss.
        let fast: FastPath = shard(for: scope).withLock { state in
            // Marking an expiring entry as used is harmless: it is replaced by the fetch.
            guard let (token, freshness) = state.cache.use(scope, at: now), freshness != .expiring else {
                return .miss
            }
            state.hits &+= 1
            if freshness == .fresh { return .fresh(token) }
            return .stale(token, refresh: state.startFlightIfIdle(scope, now: now))
        }
        switch fast {
        case .fresh(let token):
            if let observer { observer(.servedFresh(scope, fingerprint: token.fingerprint)) }
            return token
        case .stale(let token, let refresh):
            if let refresh {
                emit(.refreshScheduled(scope))
                launch(flight: refresh, for: scope)
            }
            emit(.servedStale(scope, fingerprint: token.fingerprint))
            return token
        case .miss:
            return nil
        }
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
                    case done(Result<AuthToken, any Error>)
                }
                let now = clock.uptime()
                let registration: Registration = shard.withLock { state in
                    if Task.isCancelled { return .done(.failure(CancellationError())) }
                    // Re-check under the lock: a fetch may have finished since the fast path.
                    if let (token, freshness) = state.cache.use(scope, at: now), freshness != .expiring {
                        state.hits &+= 1
                        return .done(.success(token))
                    }
                    if let cooldown = state.cooldowns[scope], cooldown.until > now, state.flights[scope] == nil {
                        return .done(.failure(cooldown.error))
                    }
                    state.waits += 1
                    if state.flights[scope] != nil {
                        state.flights[scope]?.waiters[waiterID] = continuation
                        return .joined
                    }
                    let flightID = state.nextID()
                    state.flights[scope] = TokenEngineState.Flight(id: flightID, waiters: [waiterID: continuation])
                    state.fetches += 1
                    return .started(flightID)
                }
                switch registration {
                case .joined: break
                case .started(let flightID): launch(flight: flightID, for: scope)
                case .done(let result):
                    if case .failure(let error as FleetAuthError) = result {
                        emit(.failureReplayed(scope, error: error))
                    }
                    continuation.resume(with: result)
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
            return false
        }
        if orphaned { task.cancel() }
    }

    /// Fetches, then stores the outcome and answers every waiter — only if the slot
    /// still belongs to this flight (`invalidateAll()` may have taken it).
    private func run(flight flightID: UInt64, for scope: AuthorizationScope) async {
        let started = clock.uptime()
        var result = await fetcher.fetch(scope)
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
                let said = rejected.rejection.map { " The fleet service had said: \($0)." } ?? ""
                result = .failure(
                    FleetAuthError(
                        code: .rejectedTokenReissued,
                        message:
                            "The backend returned the token the fleet service had just rejected; it must mint a new token when asked again, and the fleet service's reason must be fixed first.\(said)",
                        scope: scope, status: rejected.rejection?.status, underlyingError: rejected.rejection))
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
                state.cooldowns[scope] = nil
            case .failure(let error):
                if configuration.retry.failureCooldown > 0 {
                    state.cooldowns[scope] = TokenEngineState.Cooldown(
                        error: error, until: now + configuration.retry.failureCooldown)
                }
            }
            return Array(flight.waiters.values)
        }
        if let evicted { emit(.evicted(evicted)) }
        for waiter in waiters ?? [] { waiter.resume(with: result.mapError { $0 as any Error }) }
        for waiter in tracker.withLock({ $0.finish() }) { waiter.resume() }
    }

    func emit(_ event: @autoclosure () -> TokenEvent) {
        if let observer { observer(event()) }
    }
}
