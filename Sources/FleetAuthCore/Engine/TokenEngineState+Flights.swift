import Foundation

/// A scope's fetch as events on the state, each under the engine's lock, each returning what
/// the engine must do once the lock is released (answer callers, start tasks, emit events):
/// a caller comes (``register(_:as:for:forced:cancelled:at:)``), the flight's task begins
/// (``begin(flight:for:at:)``), an attempt fails (``attemptFailed(flight:for:error:attempt:retryAt:at:retry:)``),
/// the fetch ends (``flightEnded(flight:for:with:startedAt:at:_:)``).
extension TokenEngineState {
    /// What became of a caller who could not be served from the cache at once.
    enum Registration {
        /// It waits for the scope's flight; `queued`: that flight waits for a slot.
        case joined(queued: Bool)
        /// It waits for the flight it started (`flightID`), to be launched.
        case started(UInt64)
        /// A fetch finished since the caller's first look: it is served from the cache.
        case served(Lookup)
        /// The scope is held back (``FetchGate``): it gets this error without a request.
        case replayed(FleetAuthError)
        /// The caller was cancelled before it could wait.
        case cancelled
    }

    /// What the engine does after a failed attempt.
    struct AfterFailedAttempt {
        /// Whether the flight makes another attempt.
        var retries = false
        /// The cached token, served degraded to the callers that only looked it up.
        var degraded: (token: AuthToken, waiters: [Flight.Waiter])?
        /// The callers whose budget is spent, to fail with ``failure``.
        var failed: [Flight.Waiter] = []
        /// What they are told.
        var failure: FleetAuthError
        /// The queued flight to start in the slot the attempt freed.
        var nextInQueue: FetchSlots.Queued?
    }

    /// What the engine does after a flight ended.
    struct AfterFlight {
        /// What its callers get.
        var answer: Result<AuthToken, FleetAuthError>
        var waiters: [Flight.Waiter] = []
        /// The callers of `waitUntilIdle()` to wake: no fetch task runs any more.
        var idleWaiters: [ConditionWaiter] = []
        /// The queued flight to start in the slot it freed.
        var nextInQueue: FetchSlots.Queued?
        /// The scope the full cache dropped for the new token, and whether its token was usable.
        var evicted: (scope: AuthorizationScope, usable: Bool)?
    }

    /// The random draws and settings a flight's end needs, read outside the lock.
    struct FlightEndInputs {
        let refresh: RefreshPolicy
        let retry: RetryPolicy
        /// The device's clock now, for the gate's next-request date after a failure.
        let wallNow: Date
        /// Draws in `0...1`: the refresh allowance's, the refresh spread's, the gate's wait.
        let allowanceUnit: Double
        let spreadUnit: Double
        let waitUnit: Double

        init(
            refresh: RefreshPolicy, retry: RetryPolicy, wallNow: Date, allowanceUnit: Double, spreadUnit: Double,
            waitUnit: Double
        ) {
            self.refresh = refresh
            self.retry = retry
            self.wallNow = wallNow
            self.allowanceUnit = allowanceUnit
            self.spreadUnit = spreadUnit
            self.waitUnit = waitUnit
        }
    }

    /// A caller without a usable cached token asks for `scope` at uptime `now` (`forced`:
    /// `refresh(for:)`, which wants a new token and waits even while the scope is held
    /// back): it is served, told the held error, joins the flight or starts one.
    mutating func register(
        _ continuation: Flight.Waiter, as waiterID: UInt64, for scope: AuthorizationScope, forced: Bool,
        cancelled: Bool, at now: TimeInterval
    ) -> Registration {
        if cancelled { return .cancelled }
        // The app asks for a token again: it has signed in.
        if signedOut { signIn(asking: scope, at: now) }
        if !forced {
            // A fetch may have finished since the caller's first look.
            let lookup = lookUp(scope, at: now)
            if case .miss = lookup {} else { return .served(lookup) }
            if let held = gates[scope]?.heldError(flightInBackground: flights[scope]?.isBudgetSpent, at: now) {
                return .replayed(held)
            }
        }
        waits += 1
        if flights[scope] != nil {
            flights[scope]?.add(continuation, id: waiterID, forced: forced, at: now)
            return .joined(queued: flights[scope]?.isQueued == true)
        }
        let flightID = nextID()
        flights[scope] = Flight(
            id: flightID, startedAt: now, waiter: (waiterID, continuation), forced: forced)
        fetches += 1
        noteChange(of: scope, at: now)
        return .started(flightID)
    }

    /// Takes back the waiter `waiterID` of `scope`'s flight (its caller was cancelled).
    mutating func cancel(waiter waiterID: UInt64, of scope: AuthorizationScope) -> Flight.Waiter? {
        flights[scope]?.remove(waiterID)
    }

    /// Flight `flightID`'s task begins at uptime `started`: returns the number of its first
    /// attempt (an outage's backoff carries on from the scope's earlier flights).
    mutating func begin(flight flightID: UInt64, for scope: AuthorizationScope, at started: TimeInterval) -> Int {
        if flights[scope]?.id == flightID { flights[scope]?.begin(at: started) }
        return gates[scope]?.nextAttempt ?? 1
    }

    /// When flight `flightID`'s callers within budget stop waiting (uptime): an attempt must
    /// end by then. Infinite for a background refresh, or a flight that ended.
    func callersDeadline(of flightID: UInt64, for scope: AuthorizationScope, retry: RetryPolicy) -> TimeInterval {
        guard let flight = flights[scope], flight.id == flightID else { return .infinity }
        return flight.callersDeadline(retry.deadline)
    }

    /// Attempt `attempt` of flight `flightID` failed with `error` at uptime `now`; the next
    /// would start at `retryAt`. Callers that only looked a token up get the cached one
    /// degraded while the failure is transient and the token is above its outage floor;
    /// callers get the error once they had the retry policy's attempts and deadline. The
    /// flight retries a transient failure while callers are within their budget or a usable
    /// token is held at `retryAt`; past an outage's first fetch, without a usable token, it
    /// makes one attempt and the gate (``FetchGate``) spaces the next fetch.
    mutating func attemptFailed(
        flight flightID: UInt64, for scope: AuthorizationScope, error: FleetAuthError, attempt: Int,
        retryAt: TimeInterval, at now: TimeInterval, retry: RetryPolicy
    ) -> AfterFailedAttempt {
        // A failed attempt makes room: queued flights do not wait behind retries.
        var after = AfterFailedAttempt(failure: error, nextInQueue: releaseSlot(of: flightID))
        guard var flight = flights[scope], flight.id == flightID else { return after }
        var gate = gates[scope] ?? FetchGate()
        gate.attemptFailed(error, attempt: attempt, flightStartedAt: flight.startedAt)
        flight.failedAttempts += 1
        gates[scope] = gate
        boundPerScopeState()
        let failures = gate.failures ?? FetchGate.FailureRun(since: flight.startedAt, error: error)
        let entry = cache.peek(scope)
        let usableAtRetry = entry?.isAboveFloor(at: retryAt) ?? false
        let oneAttempt = gate.isInLongOutage(at: flight.startedAt) && !usableAtRetry
        let waitedSince = flight.waitedSince
        let budgetSpent =
            !error.isTransient || oneAttempt || attempt >= retry.maximumAttempts
            || retryAt >= waitedSince + retry.deadline
        if budgetSpent { flight.budget = .spent }
        if error.isTransient, let entry, entry.isAboveFloor(at: now) {
            // A forced refresh asked for a new token: it waits on, or fails below.
            let lookups = flight.takeLookups()
            if !lookups.isEmpty { after.degraded = (entry.token, lookups) }
            hits &+= lookups.count
            degraded &+= lookups.count
        }
        if budgetSpent, !flight.waiters.isEmpty {
            after.failure = failures.failure(
                at: now, waitedSince: waitedSince, attempts: flight.failedAttempts, retry: retry)
            after.failed = flight.takeAllWaiters()
        } else {
            after.failure = failures.failure(at: now)
        }
        after.retries = error.isTransient && !oneAttempt && (!flight.waiters.isEmpty || usableAtRetry)
        flights[scope] = flight
        noteChange(of: scope, at: now)
        return after
    }

    /// Flight `flightID`, started at uptime `started`, ended at `now` with `fetched`: the
    /// token is cached (the full cache may drop another scope's), or the failure recorded
    /// in the scope's gate; its callers are to be answered alike.
    mutating func flightEnded(
        flight flightID: UInt64, for scope: AuthorizationScope, with fetched: Result<AuthToken, FleetAuthError>,
        startedAt started: TimeInterval, at now: TimeInterval, _ inputs: FlightEndInputs
    ) -> AfterFlight {
        var after = AfterFlight(answer: fetched)
        if case .success = fetched { recordFetch(duration: now - started) }
        runningTasks -= 1
        after.nextInQueue = releaseSlot(of: flightID)
        after.idleWaiters = take(\.idleWaiters, when: isIdle)
        // Sign-out took the flight: its outcome is discarded.
        guard let flight = flights[scope], flight.id == flightID else { return after }
        flights[scope] = nil
        // A fleet's cold start grew the table to hold a flight per vehicle; a dictionary
        // keeps its capacity when emptied, so let it go (about 15 MB at 100,000 vehicles).
        if flights.isEmpty { flights = [:] }
        // A rejection that arrived while the answer was on its way.
        if case .success(let token) = fetched, rejected[scope]?.contains(token.value) == true {
            after.answer = .failure(TokenEngine.reissued(scope))
        }
        switch after.answer {
        case .success(let token):
            after.evicted = store(token, for: scope, at: now, inputs)
        case .failure(let error):
            var gate = gates[scope] ?? FetchGate()
            gate.fetchFailed(
                error, startedAt: started, at: now, wallNow: inputs.wallNow, retry: inputs.retry,
                randomUnit: inputs.waitUnit)
            gates[scope] = gate
            boundPerScopeState()
            after.answer = .failure(gate.failures?.failure(at: now) ?? error)
        }
        noteChange(of: scope, at: now)
        if let evicted = after.evicted { noteChange(of: evicted.scope, at: now) }
        after.waiters = Array(flight.waiters.values)
        return after
    }

    /// Caches a fetched token and clears the scope's failures: returns the scope the full
    /// cache dropped for it, if any.
    private mutating func store(
        _ token: AuthToken, for scope: AuthorizationScope, at now: TimeInterval, _ inputs: FlightEndInputs
    ) -> (scope: AuthorizationScope, usable: Bool)? {
        let allowance = inputs.refresh.adaptiveAllowance(
            slowestFetch: slowestRecentFetch, retry: inputs.retry, randomUnit: inputs.allowanceUnit)
        let previous = cache.peek(scope)
        var entry = TokenCache.Entry(
            token: token, policy: inputs.refresh, allowance: allowance, lookupInterval: previous?.lookupInterval ?? 0)
        // A token fetched off the refresh schedule (cold start, a token that ran out, the end
        // of an outage) may share its minute with a whole fleet's: spread its refresh. One
        // fetched on schedule keeps the phase.
        let onSchedule = previous?.isInUse(at: now) ?? false
        if inputs.refresh.spreadsRefreshes, !onSchedule || gates[scope]?.failures != nil {
            entry.spreadRefresh(from: now, unit: inputs.spreadUnit)
        }
        var evicted: (scope: AuthorizationScope, usable: Bool)?
        if let dropped = cache.store(entry) {
            // Every usable token dropped warns, and the statistics count them.
            let usable = dropped.entry.isAboveFloor(at: now)
            if usable { evictedUsable += 1 }
            evicted = (dropped.scope, usable)
            forget(dropped.scope)
        }
        gates[scope]?.fetchSucceeded(replaced: previous != nil)
        if gates[scope]?.isEmpty == true { gates[scope] = nil }
        return evicted
    }
}
