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
/// Completion order and threads: results are delivered by resuming the callers'
/// continuations after the lock is released; nothing is called back under a lock.
public final class TokenEngine: Sendable {
    /// The configuration the engine was made with.
    public let configuration: Configuration
    private let fetcher: TokenFetcher
    // Hoisted out of `configuration` for the lookup fast path.
    private let clock: any WallClock
    private let observer: (@Sendable (TokenEvent) -> Void)?
    private let state: LockedState<TokenEngineState>

    /// Creates an engine; throws `invalidConfiguration` for unusable policies.
    public init(configuration: Configuration) throws(FleetAuthError) {
        try configuration.refresh.validate()
        try configuration.retry.validate()
        guard configuration.cacheCapacity >= 1 else {
            throw FleetAuthError(code: .invalidConfiguration, message: "cacheCapacity must be at least 1.")
        }
        self.configuration = configuration
        self.clock = configuration.clock
        let observer = configuration.observer
        self.observer = observer
        self.fetcher = TokenFetcher(
            endpoint: configuration.endpoint, transport: configuration.transport, clock: configuration.clock,
            refresh: configuration.refresh, retry: configuration.retry, emit: { event in observer?(event) })
        self.state = LockedState(TokenEngineState(cache: TokenCache(capacity: configuration.cacheCapacity)))
    }

    // MARK: - Getting tokens

    /// A token for `scope` with at least the minimum remaining lifetime.
    ///
    /// Returns at once for a fresh or stale cached token; otherwise waits for the shared
    /// fetch. Throws ``FleetAuthError`` or, if the calling task is cancelled while
    /// waiting, `CancellationError` (the fetch goes on for other callers).
    public func token(for scope: AuthorizationScope) async throws -> AuthToken {
        let now = clock.now()
        enum FastPath {
            case fresh(AuthToken)
            case stale(AuthToken, refresh: UInt64?)
            case slow
        }
        // One hash lookup under the lock; invalid scopes simply miss and are refused below.
        let fast: FastPath = state.withLock { state in
            // Marking an expiring entry as used is harmless: it is replaced by the fetch.
            guard let entry = state.cache.use(scope) else { return .slow }
            let freshness = entry.freshness(at: now)
            guard freshness != .expiring else { return .slow }
            state.hits += 1
            if freshness == .fresh { return .fresh(entry.token) }
            let refresh = state.startFlightIfIdle(scope, now: now)
            return .stale(entry.token, refresh: refresh)
        }
        switch fast {
        case .fresh(let token):
            emit(.servedFresh(scope, fingerprint: token.fingerprint))
            return token
        case .stale(let token, let refresh):
            if let refresh {
                emit(.refreshScheduled(scope))
                launch(flight: refresh, for: scope)
            }
            emit(.servedStale(scope, fingerprint: token.fingerprint))
            return token
        case .slow:
            return try await waitForFetch(try scope.validated())
        }
    }

    /// Registers the caller as a waiter of the scope's fetch, starting one if none runs.
    private func waitForFetch(_ scope: AuthorizationScope) async throws -> AuthToken {
        let waiterID = state.withLock { $0.nextID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: TokenEngineState.Waiter) in
                enum Registration {
                    case joined
                    case started(UInt64)
                    case done(Result<AuthToken, any Error>)
                }
                let now = clock.now()
                let registration: Registration = state.withLock { state in
                    if Task.isCancelled { return .done(.failure(CancellationError())) }
                    // Re-check under the lock: a fetch may have finished since the fast path.
                    if let entry = state.cache.use(scope), entry.freshness(at: now) != .expiring {
                        state.hits += 1
                        return .done(.success(entry.token))
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
                case .done(let result): continuation.resume(with: result)
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.flights[scope]?.waiters.removeValue(forKey: waiterID) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Starts the task that runs flight `flightID` and records it in the slot.
    private func launch(flight flightID: UInt64, for scope: AuthorizationScope) {
        let task = Task { await self.run(flight: flightID, for: scope) }
        let orphaned = state.withLock { state -> Bool in
            guard state.flights[scope]?.id == flightID else { return true }
            state.flights[scope]?.task = task
            return false
        }
        if orphaned { task.cancel() }
    }

    /// Fetches, then stores the outcome and answers every waiter — only if the slot
    /// still belongs to this flight (`invalidateAll()` may have taken it).
    private func run(flight flightID: UInt64, for scope: AuthorizationScope) async {
        var result = await fetcher.fetch(scope)
        let now = clock.now()
        var evicted: AuthorizationScope?
        var idle: [CheckedContinuation<Void, Never>] = []
        let waiters: [TokenEngineState.Waiter]? = state.withLock { state in
            guard let flight = state.flights[scope], flight.id == flightID else { return nil }
            state.flights[scope] = nil
            idle = state.takeIdleWaitersIfIdle()
            if case .success(let token) = result, state.rejected[scope]?.contains(token.value) == true {
                result = .failure(
                    FleetAuthError(
                        code: .rejectedTokenReissued,
                        message:
                            "The backend returned the token the fleet service had just rejected; it must mint a new token when asked again.",
                        scope: scope))
            }
            switch result {
            case .success(let token):
                evicted = state.cache.store(TokenCache.Entry(token: token, policy: configuration.refresh), for: scope)
                state.cooldowns[scope] = nil
            case .failure(let error):
                if configuration.retry.failureCooldown > 0 {
                    state.cooldowns[scope] = TokenEngineState.Cooldown(
                        error: error, until: now.addingTimeInterval(configuration.retry.failureCooldown))
                }
            }
            return Array(flight.waiters.values)
        }
        guard let waiters else { return }
        if let evicted { emit(.evicted(evicted)) }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        for waiter in idle { waiter.resume() }
    }

    // MARK: - Invalidation

    /// Drops `tokenValue` for `scope` because the fleet service rejected it (401/403).
    ///
    /// The token is dropped only if it is still the cached one, so a late rejection of an
    /// older token does not cause a second refetch. Either way the value is remembered:
    /// a later fetch that returns it fails with `rejectedTokenReissued`.
    /// - Returns: whether the cached token was dropped.
    @discardableResult
    public func invalidate(_ tokenValue: String, for scope: AuthorizationScope) -> Bool {
        let dropped = state.withLock { state -> Bool in
            var rejected = state.rejected[scope] ?? []
            if !rejected.contains(tokenValue) {
                rejected.append(tokenValue)
                if rejected.count > 4 { rejected.removeFirst() }
            }
            state.rejected[scope] = rejected
            guard state.cache.peek(scope)?.token.value == tokenValue else { return false }
            state.cache.remove(scope)
            return true
        }
        emit(.invalidated(scope, fingerprint: AuthToken.fingerprint(of: tokenValue), dropped: dropped))
        return dropped
    }

    /// Drops every token, cooldown and in-flight fetch (sign-out). Waiting callers get
    /// `signedOut`; a fetch that completes later is discarded.
    public func invalidateAll() {
        let (flights, idle) = state.withLock { state in
            let flights = Array(state.flights.values)
            state.cache.removeAll()
            state.flights.removeAll()
            state.cooldowns.removeAll()
            state.rejected.removeAll()
            return (flights, state.takeIdleWaitersIfIdle())
        }
        for flight in flights {
            flight.task?.cancel()
            for waiter in flight.waiters.values {
                waiter.resume(
                    throwing: FleetAuthError(
                        code: .signedOut,
                        message: "Every token was invalidated (sign-out) while this fetch ran; sign in again and retry."
                    ))
            }
        }
        for waiter in idle { waiter.resume() }
        emit(.invalidatedAll)
    }

    // MARK: - Inspection

    /// The cached token for `scope`, whatever its freshness; `nil` if none. Never fetches
    /// and never suspends.
    public func cachedToken(for scope: AuthorizationScope) -> AuthToken? {
        state.withLock { $0.cache.peek(scope)?.token }
    }

    /// Counts of what the engine has done so far, and what it holds now.
    public var statistics: Statistics {
        state.withLock { state in
            Statistics(
                fetches: state.fetches, hits: state.hits, waits: state.waits, cachedScopes: state.cache.count,
                activeFetches: state.flights.count)
        }
    }

    /// Returns once no fetch is in flight, background refreshes included.
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.flights.isEmpty { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func emit(_ event: @autoclosure () -> TokenEvent) {
        if let observer { observer(event()) }
    }
}
