import Foundation

/// What ``TokenEngine`` keeps behind its one lock: the token cache, each scope's fetch in
/// flight with its waiting callers, failures since the last success, values the fleet
/// service rejected, running fetch tasks, and the counters behind ``TokenStatistics``.
package struct TokenEngineState {
    /// A caller waiting for a condition of `waitUntilIdle()` or `waitUntilCallersAnswered()`.
    package typealias ConditionWaiter = CheckedContinuation<Void, Never>

    /// What a lookup found in the cache.
    package enum Lookup {
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

    package var cache: TokenCache
    package var flights: [AuthorizationScope: Flight] = [:]
    /// What each scope's fetches met since they last went well, and when it may ask the
    /// backend again (``FetchGate``): kept only while it holds something.
    package var gates: [AuthorizationScope: FetchGate] = [:]
    /// Set by `invalidateAll()` (sign-out) and cleared when the app next asks for a token:
    /// until then every scope without a token or a fetch stands `signedOut`.
    package var signedOut = false
    /// The scopes whose streams heard `signedOut` (those held at sign-out, and those a stream
    /// opened since follows): they hear `noToken` when the app signs in again.
    var signedOutScopes: Set<AuthorizationScope> = []
    /// Values the fleet service rejected, per scope (the last four); a fetch must not
    /// return them.
    package var rejected: [AuthorizationScope: [String]] = [:]
    var counter: UInt64 = 0
    package var fetches = 0
    var hits = 0
    var waits = 0
    var degraded = 0
    /// Tokens the full cache dropped while still usable.
    var evictedUsable = 0
    /// Fetch tasks started and not yet finished, and the callers of `waitUntilIdle()`.
    var runningTasks = 0
    /// The fetches making their first attempt, and the flights waiting for their turn.
    var slots: FetchSlots
    /// Whether a task watches the queued flights' waiters for the end of their budget.
    var queueWatched = false
    var idleWaiters: [ConditionWaiter] = []
    /// The callers of `waitUntilCallersAnswered()`.
    var answeredWaiters: [ConditionWaiter] = []
    /// The last successful fetch durations, oldest first.
    private var durations: [TimeInterval] = []
    /// Whether a token-state stream is open, as read when the lock was taken.
    var watched = false
    /// Changes made under the lock that ``TokenEngine`` publishes after releasing it.
    var changes: [StateChange] = []
    /// When watched scopes' states change by time alone, and the engine's one sleep until
    /// the next of those moments (``TokenEngine/armPhaseClock()``).
    var phaseDeadlines = PhaseDeadlines()
    var phaseClock: (at: TimeInterval, id: UInt64, task: Task<Void, Never>?)?
    private var stateSequence: UInt64 = 0

    /// How many fetch durations are kept; the slowest of them stands for the p99.
    static let durationWindow = 32

    package init(capacity: Int, concurrentFetchLimit: Int) {
        cache = TokenCache(capacity: capacity)
        slots = FetchSlots(limit: concurrentFetchLimit)
    }

    /// Drops what is kept for `scope` beside its cache entry (its outage, its rejected
    /// values) unless a fetch for it runs: the cache has let it go.
    mutating func forget(_ scope: AuthorizationScope) {
        guard flights[scope] == nil else { return }
        gates[scope] = nil
        rejected[scope] = nil
    }

    /// Keeps the gates and rejected values bounded by the cache: past twice its capacity,
    /// those of scopes with no cache entry and no fetch running go (a pass paid once per
    /// at least as many new scopes as the cache holds).
    mutating func boundPerScopeState() {
        guard gates.count > 2 * cache.capacity || rejected.count > 2 * cache.capacity else { return }
        for scope in Set(gates.keys).union(rejected.keys) where flights[scope] == nil && cache.peek(scope) == nil {
            gates[scope] = nil
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

    /// Gives flight `flightID` a slot (`true`: its task is counted running from now), or
    /// queues it until one is free (`false`).
    package mutating func admit(flight flightID: UInt64, for scope: AuthorizationScope) -> Bool {
        if slots.admit(flightID, for: scope) {
            runningTasks += 1
            return true
        }
        if flights[scope]?.id == flightID { flights[scope]?.stage = .queued }
        return false
    }

    /// Frees flight `flightID`'s slot if it holds one: the queued flight to start in it, if
    /// one still waits (queued flights that ended meanwhile are passed over), counted
    /// running from now, so that the engine is never idle in between.
    mutating func releaseSlot(of flightID: UInt64) -> FetchSlots.Queued? {
        guard slots.release(flightID) else { return nil }
        while let next = slots.nextQueued() {
            guard flights[next.scope]?.id == next.flightID, flights[next.scope]?.isQueued == true else { continue }
            flights[next.scope]?.stage = .running(afterQueue: true)
            slots.occupy(next.flightID)
            runningTasks += 1
            return next
        }
        return nil
    }

    /// Fails the queued flights whose waiters' budget (`budget` from their first waiter)
    /// has run out at `now`: their waiters, to fail, and the next such moment, if any
    /// queued flight has waiters (otherwise nobody needs to watch the queue any more).
    mutating func expireQueuedFlights(at now: TimeInterval, budget: TimeInterval)
        -> (expired: [(AuthorizationScope, [Flight.Waiter])], next: TimeInterval?)
    {
        var expired: [(AuthorizationScope, [Flight.Waiter])] = []
        var next: TimeInterval?
        for queued in slots.queued {
            guard let flight = flights[queued.scope], flight.id == queued.flightID, flight.isQueued,
                flight.hasCallersWithinBudget
            else { continue }
            let deadline = flight.callersDeadline(budget)
            if deadline <= now {
                expired.append((queued.scope, Array(flight.waiters.values)))
                flights[queued.scope] = nil
                noteChange(of: queued.scope, at: now)
            } else {
                next = min(next ?? deadline, deadline)
            }
        }
        queueWatched = next != nil
        return (expired, next)
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
        guard watched else { return }
        let standing = standing(of: scope, at: now)
        note(standing.state)
        if let moment = standing.until { phaseDeadlines.schedule(scope, at: moment) }
    }

    /// Queues `state` for publishing, numbered after every change before it.
    mutating func note(_ state: TokenState) {
        guard watched else { return }
        stateSequence &+= 1
        changes.append(StateChange(sequence: stateSequence, state: state))
    }

    /// Every scope with a token, a fetch or a failure held here.
    var knownScopes: Set<AuthorizationScope> {
        Set(cache.scopes).union(flights.keys).union(gates.keys)
    }
}
