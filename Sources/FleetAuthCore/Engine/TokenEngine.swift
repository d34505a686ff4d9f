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
    /// Everything the engine needs.
    public struct Configuration: Sendable {
        /// The token backend.
        public var endpoint: TokenEndpoint
        /// How requests reach it.
        public var transport: any HTTPTransport
        /// Wall time. Inject a manual clock in tests.
        public var clock: any WallClock
        /// Freshness margins and lifetime limits.
        public var refresh: RefreshPolicy
        /// Retries, deadline and cooldown.
        public var retry: RetryPolicy
        /// The most scopes kept in the cache (default 1,024); the least recently used one
        /// is dropped. Keep it above the number of vehicles or trips served at once.
        public var cacheCapacity: Int
        /// Receives ``TokenEvent``s; `nil` for none.
        public var observer: (@Sendable (TokenEvent) -> Void)?

        /// Creates a configuration with the contract's defaults.
        public init(
            endpoint: TokenEndpoint, transport: any HTTPTransport, clock: any WallClock = SystemWallClock(),
            refresh: RefreshPolicy = RefreshPolicy(), retry: RetryPolicy = RetryPolicy(), cacheCapacity: Int = 1024,
            observer: (@Sendable (TokenEvent) -> Void)? = nil
        ) {
            self.endpoint = endpoint
            self.transport = transport
            self.clock = clock
            self.refresh = refresh
            self.retry = retry
            self.cacheCapacity = cacheCapacity
            self.observer = observer
        }
    }

    private typealias Waiter = CheckedContinuation<AuthToken, any Error>

    /// A cached token with the moments it turns stale and expiring, worked out once.
    private struct Entry {
        let token: AuthToken
        let staleAt: Date
        let expiringAt: Date
        var lastUsed: UInt64

        init(token: AuthToken, policy: RefreshPolicy, lastUsed: UInt64) {
            self.token = token
            staleAt = token.expiresAt.addingTimeInterval(-policy.refreshWindow(forLifetime: token.lifetime))
            expiringAt = token.expiresAt.addingTimeInterval(-policy.minimumRemaining(forLifetime: token.lifetime))
            self.lastUsed = lastUsed
        }

        func freshness(at now: Date) -> RefreshPolicy.Freshness {
            now < staleAt ? .fresh : now < expiringAt ? .stale : .expiring
        }
    }

    private struct Flight {
        let id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: Waiter] = [:]
    }

    private struct Cooldown {
        let error: FleetAuthError
        let until: Date
    }

    private struct State {
        var cache: [AuthorizationScope: Entry] = [:]
        var flights: [AuthorizationScope: Flight] = [:]
        var cooldowns: [AuthorizationScope: Cooldown] = [:]
        /// Values the fleet service rejected, per scope; a fetch must not return them.
        var rejected: [AuthorizationScope: [String]] = [:]
        var counter: UInt64 = 0

        mutating func nextID() -> UInt64 {
            counter &+= 1
            return counter
        }
    }

    /// The configuration the engine was made with.
    public let configuration: Configuration
    private let parser: TokenResponseParser
    // Hoisted out of `configuration` for the lookup fast path.
    private let clock: any WallClock
    private let observer: (@Sendable (TokenEvent) -> Void)?
    private let state = LockedState(State())

    /// Creates an engine; throws `invalidConfiguration` for unusable policies.
    public init(configuration: Configuration) throws(FleetAuthError) {
        try configuration.refresh.validate()
        try configuration.retry.validate()
        guard configuration.cacheCapacity >= 1 else {
            throw FleetAuthError(code: .invalidConfiguration, message: "cacheCapacity must be at least 1.")
        }
        self.configuration = configuration
        self.clock = configuration.clock
        self.observer = configuration.observer
        self.parser = TokenResponseParser(
            format: configuration.endpoint.format, policy: configuration.refresh,
            maximumResponseBytes: configuration.endpoint.maximumResponseBytes)
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
            guard let index = state.cache.index(forKey: scope) else { return .slow }
            let entry = state.cache.values[index]
            let freshness = entry.freshness(at: now)
            guard freshness != .expiring else { return .slow }
            state.cache.values[index].lastUsed = state.nextID()
            if freshness == .fresh { return .fresh(entry.token) }
            let refresh = Self.startFlightIfIdle(scope, now: now, in: &state)
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
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                enum Registration {
                    case joined
                    case started(UInt64)
                    case done(Result<AuthToken, any Error>)
                }
                let now = configuration.clock.now()
                let registration: Registration = state.withLock { state in
                    if Task.isCancelled { return .done(.failure(CancellationError())) }
                    // Re-check under the lock: a fetch may have finished since the fast path.
                    if let index = state.cache.index(forKey: scope),
                        state.cache.values[index].freshness(at: now) != .expiring
                    {
                        state.cache.values[index].lastUsed = state.nextID()
                        return .done(.success(state.cache.values[index].token))
                    }
                    if state.flights[scope] != nil {
                        state.flights[scope]?.waiters[waiterID] = continuation
                        return .joined
                    }
                    if let cooldown = state.cooldowns[scope], cooldown.until > now {
                        return .done(.failure(cooldown.error))
                    }
                    let flightID = state.nextID()
                    state.flights[scope] = Flight(id: flightID, waiters: [waiterID: continuation])
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

    /// Claims the scope's flight slot for a background refresh, unless a fetch already
    /// runs or the scope is cooling down after a failure.
    private static func startFlightIfIdle(_ scope: AuthorizationScope, now: Date, in state: inout State) -> UInt64? {
        guard state.flights[scope] == nil else { return nil }
        if let cooldown = state.cooldowns[scope], cooldown.until > now { return nil }
        let flightID = state.nextID()
        state.flights[scope] = Flight(id: flightID)
        return flightID
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
        var result = await fetchWithRetries(scope)
        let now = configuration.clock.now()
        var evicted: AuthorizationScope?
        let waiters: [Waiter]? = state.withLock { state in
            guard let flight = state.flights[scope], flight.id == flightID else { return nil }
            state.flights[scope] = nil
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
                state.cache[scope] = Entry(token: token, policy: configuration.refresh, lastUsed: state.nextID())
                state.cooldowns[scope] = nil
                if state.cache.count > configuration.cacheCapacity {
                    evicted = Self.evictLeastRecentlyUsed(from: &state, keeping: scope)
                }
            case .failure(let error):
                if configuration.retry.failureCooldown > 0 {
                    state.cooldowns[scope] = Cooldown(
                        error: error, until: now.addingTimeInterval(configuration.retry.failureCooldown))
                }
            }
            return Array(flight.waiters.values)
        }
        guard let waiters else { return }
        if let evicted { emit(.evicted(evicted)) }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }

    private static func evictLeastRecentlyUsed(from state: inout State, keeping scope: AuthorizationScope)
        -> AuthorizationScope?
    {
        var oldest: (scope: AuthorizationScope, lastUsed: UInt64)?
        for (candidate, entry) in state.cache where candidate != scope {
            if oldest == nil || entry.lastUsed < oldest!.lastUsed { oldest = (candidate, entry.lastUsed) }
        }
        guard let oldest else { return nil }
        state.cache[oldest.scope] = nil
        return oldest.scope
    }

    // MARK: - Fetching

    private func fetchWithRetries(_ scope: AuthorizationScope) async -> Result<AuthToken, FleetAuthError> {
        let clock = configuration.clock
        let retry = configuration.retry
        let start = clock.now()
        let deadline = start.addingTimeInterval(retry.deadline)
        var attempt = 1
        while true {
            let attemptStart = clock.now()
            emit(.fetchStarted(scope, attempt: attempt))
            let result = await fetchOnce(scope, deadline: deadline)
            let finished = clock.now()
            switch result {
            case .success(let token):
                emit(
                    .fetchSucceeded(
                        scope, fingerprint: token.fingerprint, duration: finished.timeIntervalSince(start),
                        expiresIn: token.remainingLifetime(at: finished)))
                return .success(token)
            case .failure(let error):
                var wait: TimeInterval? = nil
                if error.isTransient, attempt < retry.maximumAttempts, !Task.isCancelled {
                    let backoff = retry.backoff(afterAttempt: attempt, randomUnit: Double.random(in: 0...1))
                    let delay = max(backoff, error.retryAfter ?? 0)
                    if finished.addingTimeInterval(delay) < deadline { wait = delay }
                }
                emit(
                    .fetchFailed(scope, error: error, duration: finished.timeIntervalSince(attemptStart), retryIn: wait)
                )
                guard let wait else { return .failure(error) }
                do {
                    try await clock.sleep(for: wait)
                } catch {
                    return .failure(Self.cancelled(scope))
                }
                attempt += 1
            }
        }
    }

    private func fetchOnce(_ scope: AuthorizationScope, deadline: Date) async -> Result<AuthToken, FleetAuthError> {
        let endpoint = configuration.endpoint
        let clock = configuration.clock
        let request: TransportRequest
        do {
            request = try await endpoint.request(for: scope)
        } catch {
            return .failure(error)
        }
        let timeout = min(endpoint.timeout, deadline.timeIntervalSince(clock.now()))
        guard timeout > 0 else { return .failure(Self.timedOut(scope, request, after: 0)) }
        var bounded = request
        bounded.timeout = timeout
        let response: TransportResponse
        do {
            response = try await Self.send(bounded, over: configuration.transport, clock: clock)
        } catch let error as FleetAuthError {
            return .failure(error.adding(scope: scope, url: request.url))
        } catch is CancellationError {
            return .failure(Self.cancelled(scope))
        } catch is TimeoutSignal {
            return .failure(Self.timedOut(scope, request, after: timeout))
        } catch let error as URLError where error.code == .timedOut {
            return .failure(Self.timedOut(scope, request, after: timeout))
        } catch {
            return .failure(
                FleetAuthError(
                    code: .transportFailure,
                    message:
                        "The request to the token backend failed before an answer arrived; check connectivity and the host name.",
                    scope: scope, url: request.url, underlyingError: error))
        }
        return Result { () throws(FleetAuthError) -> AuthToken in
            try parser.token(from: response, for: scope, receivedAt: clock.now())
        }
    }

    private struct TimeoutSignal: Error {}

    /// Sends `request`, racing it against the injected clock so timeouts are testable.
    private static func send(_ request: TransportRequest, over transport: any HTTPTransport, clock: any WallClock)
        async throws -> TransportResponse
    {
        try await withThrowingTaskGroup(of: TransportResponse?.self) { group in
            group.addTask { try await transport.send(request) }
            group.addTask {
                try await clock.sleep(for: request.timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else { throw TimeoutSignal() }
            return response
        }
    }

    private static func timedOut(_ scope: AuthorizationScope, _ request: TransportRequest, after seconds: TimeInterval)
        -> FleetAuthError
    {
        FleetAuthError(
            code: .timedOut,
            message:
                "The token backend did not answer within \(String(format: "%.1f", seconds)) s; check that it is up, or raise the endpoint timeout.",
            scope: scope, url: request.url)
    }

    private static func cancelled(_ scope: AuthorizationScope) -> FleetAuthError {
        FleetAuthError(
            code: .signedOut, message: "The fetch was cancelled because every token was invalidated (sign-out).",
            scope: scope)
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
            guard state.cache[scope]?.token.value == tokenValue else { return false }
            state.cache[scope] = nil
            return true
        }
        emit(.invalidated(scope, fingerprint: AuthToken.fingerprint(of: tokenValue), dropped: dropped))
        return dropped
    }

    /// Drops every token, cooldown and in-flight fetch (sign-out). Waiting callers get
    /// `signedOut`; a fetch that completes later is discarded.
    public func invalidateAll() {
        let flights = state.withLock { state -> [Flight] in
            let flights = Array(state.flights.values)
            state.cache.removeAll()
            state.flights.removeAll()
            state.cooldowns.removeAll()
            state.rejected.removeAll()
            return flights
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
        emit(.invalidatedAll)
    }

    /// The cached token for `scope`, whatever its freshness; `nil` if none. Does not fetch.
    public func cachedToken(for scope: AuthorizationScope) -> AuthToken? {
        state.withLock { $0.cache[scope]?.token }
    }

    /// How many fetches are in flight, background refreshes included.
    public var activeFetchCount: Int { state.withLock { $0.flights.count } }

    /// How many scopes have a cached token.
    public var cachedScopeCount: Int { state.withLock { $0.cache.count } }

    private func emit(_ event: @autoclosure () -> TokenEvent) {
        if let observer { observer(event()) }
    }
}
