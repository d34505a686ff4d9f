import Foundation

/// What ``TokenEngine`` keeps behind its one lock: the token cache, each scope's fetch in
/// flight with its waiting callers, failures since the last success, values the fleet
/// service rejected, running fetch tasks, and the counters behind ``TokenStatistics``.
struct TokenEngineState {
    /// A caller waiting for a fetch.
    typealias Waiter = CheckedContinuation<AuthToken, any Error>
    /// A caller waiting for a condition of `waitUntilIdle()` or `waitUntilCallersAnswered()`.
    typealias ConditionWaiter = CheckedContinuation<Void, Never>

    /// One fetch in flight for a scope, owned by the task that runs it.
    struct Flight {
        let id: UInt64
        /// When it started (uptime).
        let startedAt: TimeInterval
        /// When its first waiter came (uptime): waiters wait at most the retry deadline
        /// from here.
        var waitedSince: TimeInterval?
        var task: Task<Void, Never>?
        var waiters: [UInt64: Waiter] = [:]
        /// Set once its waiters have had the retry policy's attempts and deadline: it now
        /// retries in the background, and callers without a usable token fail fast.
        var retriesInBackground = false
        /// Set when a caller failed fast since the last attempt: someone still needs a token.
        var demanded = false
        /// The attempts of this flight that failed so far.
        var failedAttempts = 0
    }

    /// The failures of a scope's fetches since its last success.
    struct Outage {
        /// When the first failed attempt began (uptime).
        let since: TimeInterval
        /// The last attempt's error.
        var error: FleetAuthError
        /// How many attempts have failed since it began: a later flight carries on from
        /// there, so a long outage is retried at the longest backoff, not from the first.
        var attempts = 0
        /// Callers without a usable token get ``error`` without a request until then
        /// (uptime): the cooldown after a fetch that gave up.
        var replayUntil: TimeInterval = 0

        /// ``error``, saying how long the backend has been failing once that is a second
        /// or more.
        func failure(at now: TimeInterval) -> FleetAuthError {
            let duration = now - since
            guard duration >= 1 else { return error }
            return error.appending(
                "The token backend has been failing for \(SpokenDuration.describe(duration)): no token since the first failed attempt began."
            )
        }

        /// ``error`` for a caller that waited from `waitedSince` to `now` through `attempts`
        /// attempts: how long, and which settings bound that wait.
        func failure(at now: TimeInterval, waitedSince: TimeInterval, attempts: Int, retry: RetryPolicy)
            -> FleetAuthError
        {
            let waited = now - waitedSince
            let older = now - since > waited + 1
            return (older ? failure(at: now) : error).appending(
                "This caller waited \(SpokenDuration.describe(waited)) over \(attempts) attempt\(attempts == 1 ? "" : "s"); `RetryPolicy(maximumAttempts:deadline:)` (\(retry.maximumAttempts), \(SpokenDuration.describe(retry.deadline))) bounds that wait."
            )
        }
    }

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

    /// A token state to publish once the lock is released, numbered in the order the
    /// changes happened.
    struct StateChange {
        let sequence: UInt64
        let state: TokenState
    }

    var cache: TokenCache
    var flights: [AuthorizationScope: Flight] = [:]
    var outages: [AuthorizationScope: Outage] = [:]
    /// Values the fleet service rejected, per scope (the last four); a fetch must not
    /// return them.
    var rejected: [AuthorizationScope: [String]] = [:]
    var counter: UInt64 = 0
    var fetches = 0
    var hits = 0
    var waits = 0
    var degraded = 0
    /// Tokens the full cache dropped while still usable.
    var evictedUsable = 0
    /// Fetch tasks started and not yet finished, and the callers of `waitUntilIdle()`.
    var runningTasks = 0
    var idleWaiters: [ConditionWaiter] = []
    /// The callers of `waitUntilCallersAnswered()`.
    var answeredWaiters: [ConditionWaiter] = []
    /// The last successful fetch durations, oldest first.
    private var durations: [TimeInterval] = []
    /// Whether a token-state stream is open, as read when the lock was taken.
    var watched = false
    /// Changes made under the lock that ``TokenEngine`` publishes after releasing it.
    var changes: [StateChange] = []
    private var stateSequence: UInt64 = 0

    /// How many fetch durations are kept; the slowest of them stands for the p99.
    static let durationWindow = 32

    init(capacity: Int) {
        cache = TokenCache(capacity: capacity)
    }

    /// Drops what is kept for `scope` beside its cache entry (its outage, its rejected
    /// values) unless a fetch for it runs: the cache has let it go.
    mutating func forget(_ scope: AuthorizationScope) {
        guard flights[scope] == nil else { return }
        outages[scope] = nil
        rejected[scope] = nil
    }

    /// Keeps the outages and rejected values bounded by the cache: past twice its capacity,
    /// those of scopes with no cache entry and no fetch running go (a pass paid once per
    /// at least as many new scopes as the cache holds).
    mutating func boundPerScopeState() {
        guard outages.count > 2 * cache.capacity || rejected.count > 2 * cache.capacity else { return }
        for scope in Set(outages.keys).union(rejected.keys) where flights[scope] == nil && cache.peek(scope) == nil {
            outages[scope] = nil
            rejected[scope] = nil
        }
    }

    mutating func nextID() -> UInt64 {
        counter &+= 1
        return counter
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
            guard aboveFloor, let outage = outages[scope], outage.error.isTransient else { return .miss }
            hits &+= 1
            degraded &+= 1
            return .degraded(token, outage.error, refresh: startFlightIfIdle(scope, now: now))
        }
    }

    /// Claims the scope's flight slot for a fetch with no waiter yet (a background
    /// refresh), unless a fetch already runs or the scope is cooling down after a failure.
    /// - Returns: the new flight's ID.
    mutating func startFlightIfIdle(_ scope: AuthorizationScope, now: TimeInterval) -> UInt64? {
        guard flights[scope] == nil else { return nil }
        if let outage = outages[scope], outage.replayUntil > now { return nil }
        let flightID = nextID()
        flights[scope] = Flight(id: flightID, startedAt: now)
        fetches += 1
        // Noted with the flight, so that streams hear it before the flight's outcome.
        noteChange(of: scope, at: now)
        return flightID
    }

    /// Whether no fetch task runs, background refreshes included.
    var isIdle: Bool { runningTasks == 0 }

    /// Whether no caller waits for a fetch (background refreshes may still run).
    var callersAnswered: Bool { flights.values.allSatisfy { $0.waiters.isEmpty } }

    /// Empties `queue` if `condition` holds now: the waiters to wake.
    mutating func take(_ queue: WritableKeyPath<Self, [ConditionWaiter]>, when condition: Bool)
        -> [ConditionWaiter]
    {
        guard condition, !self[keyPath: queue].isEmpty else { return [] }
        defer { self[keyPath: queue].removeAll() }
        return self[keyPath: queue]
    }

    /// Records a successful fetch's duration.
    mutating func recordFetch(duration: TimeInterval) {
        guard duration.isFinite, duration >= 0 else { return }
        if durations.count == Self.durationWindow { durations.removeFirst() }
        durations.append(duration)
    }

    /// The slowest of the recent fetches (0 before the first).
    var slowestRecentFetch: TimeInterval { durations.max() ?? 0 }

    /// Notes that `scope`'s token state may have changed, for the streams to hear once
    /// the lock is released.
    mutating func noteChange(of scope: AuthorizationScope, at now: TimeInterval) {
        note(tokenState(of: scope, at: now))
    }

    /// Queues `state` for publishing, numbered after every change before it.
    mutating func note(_ state: TokenState) {
        guard watched else { return }
        stateSequence &+= 1
        changes.append(StateChange(sequence: stateSequence, state: state))
    }

    /// How `scope`'s token stands at uptime `now`, for ``TokenState`` streams.
    func tokenState(of scope: AuthorizationScope, at now: TimeInterval) -> TokenState {
        let entry = cache.peek(scope)
        if let outage = outages[scope] {
            // Still handed out: through a transient failure down to the outage floor, through
            // a refusal (a 401 or 403 to the refresh) while it has its minimum life left.
            let transient = outage.error.isTransient
            if let entry, transient ? now < entry.floorAt : now <= entry.expiringAt {
                return TokenState(
                    scope: scope, phase: transient ? .degraded : .refreshRefused, token: entry.token,
                    error: outage.error)
            }
            // No usable token, but the fetch its callers wait for still has retries left.
            if let flight = flights[scope], !flight.retriesInBackground, !flight.waiters.isEmpty {
                return TokenState(scope: scope, phase: .refreshing, token: nil, error: outage.error)
            }
            return TokenState(scope: scope, phase: .failed, token: nil, error: outage.failure(at: now))
        }
        if flights[scope] != nil {
            return TokenState(
                scope: scope, phase: .refreshing, token: entry.flatMap { now <= $0.expiringAt ? $0.token : nil })
        }
        if let entry, now <= entry.expiringAt { return TokenState(scope: scope, phase: .fresh, token: entry.token) }
        return TokenState(scope: scope, phase: .noToken, token: nil)
    }

    /// Every scope with a token, a fetch or a failure held here.
    var knownScopes: Set<AuthorizationScope> {
        Set(cache.scopes).union(flights.keys).union(outages.keys)
    }
}
