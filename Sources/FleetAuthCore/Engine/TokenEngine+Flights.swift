import Foundation

extension TokenEngine {
    /// Registers the caller as a waiter of the scope's fetch, starting one if none runs.
    /// `forced`: the caller wants a new token, not the cached one, and waits for the fetch
    /// even while the scope cools down after a failure.
    func waitForFetch(_ scope: AuthorizationScope, forced: Bool = false) async throws -> AuthToken {
        let waiterID = state.withLock { $0.nextID() }
        // Through the lock once more on the way out. The fetch's end stores its token (or
        // makes its error) under this lock and resumes the waiters after it; a waiter
        // resumed before it reached its `await` continues without a suspension, and the
        // runtime then hands the result over by an atomic that the thread sanitizer does not
        // see (it reported the token's fields as raced). Taking the lock is an edge it sees,
        // and costs one lock for each caller that waited for a fetch, none for a cached token.
        defer { state.withLock { _ in } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<AuthToken, any Error>) in
                register(continuation, as: waiterID, for: scope, forced: forced)
            }
        } onCancel: {
            let waiter = withState { state in
                state.flights[scope]?.forcedWaiters.remove(waiterID)
                return state.flights[scope]?.waiters.removeValue(forKey: waiterID)
            }
            if let waiter { waiter.resume(with: .failure(CancellationError())) }
            wakeAnsweredCallers()
        }
    }

    /// Not inlined into the wait: every caller waiting for a fetch holds the wait's frame.
    @inline(never)
    private func register(
        _ continuation: CheckedContinuation<AuthToken, any Error>, as waiterID: UInt64, for scope: AuthorizationScope,
        forced: Bool
    ) {
        enum Registration {
            case joined(queued: Bool)
            case started(UInt64)
            case served(TokenEngineState.Lookup)
            case replayed(FleetAuthError)
            case cancelled
        }
        let now = clock.uptime()
        let registration: Registration = withState { state in
            if Task.isCancelled { return .cancelled }
            // The app asks for a token again: it has signed in.
            if state.signedOut { state.signIn(asking: scope, at: now) }
            // Re-check under the lock: a fetch may have finished since the fast path.
            if !forced {
                let lookup = state.lookUp(scope, at: now)
                if case .miss = lookup {} else { return .served(lookup) }
            }
            if !forced,
                let held = state.gates[scope]?.heldError(
                    flightInBackground: state.flights[scope]?.waitersBudgetSpent, at: now)
            {
                return .replayed(held)
            }
            state.waits += 1
            if let flight = state.flights[scope] {
                // The first waiter since the flight had none (a background refresh, or one
                // whose earlier waiters were answered) starts a new budget.
                if flight.waiters.isEmpty { state.flights[scope]?.waitedSince = now }
                state.flights[scope]?.waiters[waiterID] = continuation
                if forced {
                    // A refresh asks anew: a background flight whose waiters had their budget
                    // gives this one a budget of its own.
                    state.flights[scope]?.forcedWaiters.insert(waiterID)
                    if flight.waitersBudgetSpent {
                        state.flights[scope]?.waitersBudgetSpent = false
                        state.flights[scope]?.waitedSince = now
                    }
                }
                return .joined(queued: flight.queued)
            }
            let flightID = state.nextID()
            state.flights[scope] = TokenEngineState.Flight(
                id: flightID, startedAt: now, waitedSince: now, waiters: [waiterID: continuation],
                forcedWaiters: forced ? [waiterID] : [])
            state.fetches += 1
            state.noteChange(of: scope, at: now)
            return .started(flightID)
        }
        switch registration {
        case .joined(let queued): if queued { watchQueue(for: scope) }
        case .started(let flightID): launch(flight: flightID, for: scope)
        case .served(let lookup):
            if let token = completeLookup(lookup, for: scope, at: now) { continuation.resume(returning: token) }
        case .replayed(let error):
            emit(.failureReplayed(scope, error: error))
            continuation.resume(throwing: error)
        case .cancelled:
            continuation.resume(throwing: CancellationError())
        }
    }

    /// Starts the task that runs flight `flightID` if a slot is free (``FetchSlots``), else
    /// queues it; a queued flight with waiters has their budget watched.
    func launch(flight flightID: UInt64, for scope: AuthorizationScope) {
        let admitted = state.withLock { $0.admit(flight: flightID, for: scope) }
        if admitted {
            start(flight: flightID, for: scope)
        } else {
            watchQueue(for: scope)
        }
    }

    /// Starts the task that runs flight `flightID`, which holds a slot (and is counted in
    /// `runningTasks` since it got it), and records it in the scope's flight.
    private func start(flight flightID: UInt64, for scope: AuthorizationScope) {
        warnIfDuplicate(serving: scope)
        let task = clock.startTask { await self.run(flight: flightID, for: scope) }
        let orphaned = withState { state -> Bool in
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
        let firstAttempt = begin(flight: flightID, for: scope, at: started)
        let waitersDeadline = configuration.retry.deadline
        let result = await fetcher.fetch(
            scope, firstAttempt: firstAttempt,
            deadline: {
                // Waiters within their budget bound the attempt; a background retry is not.
                state.withLock { state in
                    guard let flight = state.flights[scope], flight.id == flightID, !flight.waiters.isEmpty,
                        !flight.waitersBudgetSpent, let waitedSince = flight.waitedSince
                    else { return .infinity }
                    return waitedSince + waitersDeadline
                }
            },
            refusal: { token in
                // A token the fleet service rejected must not come back as new.
                let reissued = state.withLock { $0.rejected[scope]?.contains(token.value) == true }
                return reissued ? Self.reissued(scope) : nil
            },
            shouldRetry: { error, attempt, retryAt in
                attemptFailed(flight: flightID, for: scope, error: error, attempt: attempt, retryAt: retryAt)
            })
        finish(flight: flightID, for: scope, with: result, startedAt: started)
    }

    /// Starts the waiters' budget of flight `flightID` (from when the fetch really starts,
    /// unless it waited for a slot: then from their arrival) and returns the number of its
    /// first attempt. Not inlined, as `finish` is not.
    @inline(never)
    private func begin(flight flightID: UInt64, for scope: AuthorizationScope, at started: TimeInterval) -> Int {
        state.withLock { state in
            if let flight = state.flights[scope], flight.id == flightID, !flight.waitedForSlot,
                let since = flight.waitedSince
            {
                state.flights[scope]?.waitedSince = max(since, started)
            }
            return state.gates[scope]?.nextAttempt ?? 1
        }
    }

    /// Stores a finished flight's outcome, answers its waiters, and wakes the callers of
    /// `waitUntilIdle()` once no fetch task runs. Not inlined, as `attemptFailed` is not: the
    /// flight's async frame would hold their every value, for every flight of a fleet at once.
    @inline(never)
    private func finish(
        flight flightID: UInt64, for scope: AuthorizationScope, with fetched: Result<AuthToken, FleetAuthError>,
        startedAt started: TimeInterval
    ) {
        let now = clock.uptime()
        let refresh = configuration.refresh
        let randomUnit = fetcher.randomUnit()
        let spreadUnit = fetcher.randomUnit()
        // The gate's wait after a failed fetch is drawn: a fleet failing together does not
        // come back together.
        var failure: (unit: Double, wallNow: Date)?
        if case .failure = fetched { failure = (fetcher.randomUnit(), clock.now()) }
        var evicted: (scope: AuthorizationScope, usable: Bool)?
        typealias Outcome = (
            waiters: [TokenEngineState.Waiter], result: Result<AuthToken, FleetAuthError>,
            idle: [TokenEngineState.ConditionWaiter], next: FetchSlots.Queued?
        )
        let (waiters, result, idle, next) = withState { state -> Outcome in
            var result = fetched
            if case .success = result { state.recordFetch(duration: now - started) }
            state.runningTasks -= 1
            let next = state.releaseSlot(of: flightID)
            let idle = state.take(\.idleWaiters, when: state.isIdle)
            guard let flight = state.flights[scope], flight.id == flightID else { return ([], result, idle, next) }
            state.flights[scope] = nil
            // A fleet's cold start grew the table to hold a flight per vehicle; a dictionary
            // keeps its capacity when emptied, so let it go (about 15 MB at 100,000 vehicles).
            if state.flights.isEmpty { state.flights = [:] }
            // A rejection that arrived while the answer was on its way.
            if case .success(let token) = result, state.rejected[scope]?.contains(token.value) == true {
                result = .failure(Self.reissued(scope))
            }
            switch result {
            case .success(let token):
                let allowance = refresh.adaptiveAllowance(
                    slowestFetch: state.slowestRecentFetch, retry: configuration.retry, randomUnit: randomUnit)
                let previous = state.cache.peek(scope)
                var entry = TokenCache.Entry(
                    token: token, policy: refresh, allowance: allowance, lookupInterval: previous?.lookupInterval ?? 0)
                // A token fetched off the refresh schedule (cold start, a token that ran
                // out, the end of an outage) may share its minute with a whole fleet's:
                // spread its refresh. One fetched on schedule keeps the phase.
                let onSchedule = previous.map { $0.isInUse(at: now) } ?? false
                if refresh.spreadsRefreshes, !onSchedule || state.gates[scope]?.failures != nil {
                    entry.spreadRefresh(from: now, unit: spreadUnit)
                }
                if let dropped = state.cache.store(entry) {
                    // Every usable token dropped warns, and the statistics count them.
                    let usable = dropped.entry.isAboveFloor(at: now)
                    if usable { state.evictedUsable += 1 }
                    evicted = (dropped.scope, usable)
                    state.forget(dropped.scope)
                }
                state.gates[scope]?.fetchSucceeded(replaced: previous != nil)
                if state.gates[scope]?.isEmpty == true { state.gates[scope] = nil }
            case .failure(let error):
                var gate = state.gates[scope] ?? FetchGate()
                // `failure` is nil for a fetched token found reissued above: its wait is drawn at
                // the middle, and the wall clock read now.
                gate.fetchFailed(
                    error, startedAt: started, at: now, wallNow: failure?.wallNow ?? clock.now(),
                    retry: configuration.retry, randomUnit: failure?.unit ?? 0.5)
                state.gates[scope] = gate
                state.boundPerScopeState()
                result = .failure(gate.failures?.failure(at: now) ?? error)
            }
            state.noteChange(of: scope, at: now)
            if let evicted { state.noteChange(of: evicted.scope, at: now) }
            return (Array(flight.waiters.values), result, idle, next)
        }
        if let next { start(flight: next.flightID, for: next.scope) }
        if let evicted {
            emit(.evicted(evicted.scope, usable: evicted.usable, capacity: configuration.cacheCapacity))
        }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        wakeAnsweredCallers()
        wake(idle)
    }

    /// The error of a fetch that returned the token the fleet service had just rejected.
    static func reissued(_ scope: AuthorizationScope) -> FleetAuthError {
        FleetAuthError(
            reason: .rejectedTokenReissued,
            message:
                "The backend returned the token the fleet service had just rejected; it must mint a new token when asked again.",
            scope: scope)
    }

    /// Records a failed attempt of flight `flightID` and decides whether another follows at
    /// uptime `retryAt`. Its waiters get the cached token degraded when the failure is
    /// transient and the token is above its outage floor (not those of `refresh(for:)`, which
    /// asked for a new token), or the error once they have had the retry policy's attempts
    /// and deadline. The flight keeps retrying a transient
    /// failure while the cached token stays usable until `retryAt`, or while waiters are
    /// within their budget; past an outage's first fetch, without a usable token, it makes
    /// one attempt and the gate (``FetchGate``) spaces the next fetch.
    @inline(never)
    private func attemptFailed(
        flight flightID: UInt64, for scope: AuthorizationScope, error: FleetAuthError, attempt: Int,
        retryAt: TimeInterval
    ) -> Bool {
        let now = clock.uptime()
        let retry = configuration.retry
        typealias Outcome = (
            retries: Bool, served: (AuthToken, [TokenEngineState.Waiter])?, failed: [TokenEngineState.Waiter],
            failure: FleetAuthError, next: FetchSlots.Queued?
        )
        let outcome = withState { state -> Outcome in
            // A failed attempt makes room: queued flights do not wait behind retries.
            let next = state.releaseSlot(of: flightID)
            guard var flight = state.flights[scope], flight.id == flightID else {
                return (false, nil, [], error, next)
            }
            var gate = state.gates[scope] ?? FetchGate()
            gate.attemptFailed(error, attempt: attempt, flightStartedAt: flight.startedAt)
            flight.failedAttempts += 1
            state.gates[scope] = gate
            state.boundPerScopeState()
            let failures = gate.failures ?? FetchGate.FailureRun(since: flight.startedAt, error: error)
            let entry = state.cache.peek(scope)
            let usable = entry.map { $0.isAboveFloor(at: retryAt) } ?? false
            // Past an outage's first fetch, without a usable token, the gate spaces the requests.
            let oneAttempt = gate.isInLongOutage(at: flight.startedAt) && !usable
            let budgetSpent =
                !error.isTransient || oneAttempt || attempt >= retry.maximumAttempts
                || retryAt >= (flight.waitedSince ?? flight.startedAt) + retry.deadline
            if budgetSpent { flight.waitersBudgetSpent = true }
            var served: (AuthToken, [TokenEngineState.Waiter])?
            var failed: [TokenEngineState.Waiter] = []
            if !flight.waiters.isEmpty {
                if error.isTransient, let entry, entry.isAboveFloor(at: now) {
                    // A forced refresh asked for a new token: it waits on, or fails below.
                    let lookups = flight.waiters.filter { !flight.forcedWaiters.contains($0.key) }
                    served = (entry.token, Array(lookups.values))
                    state.hits &+= lookups.count
                    state.degraded &+= lookups.count
                    for id in lookups.keys { flight.waiters[id] = nil }
                }
                if budgetSpent {
                    failed = Array(flight.waiters.values)
                    flight.waiters = [:]
                    flight.forcedWaiters = []
                }
            }
            let retries = error.isTransient && !oneAttempt && (!flight.waiters.isEmpty || usable)
            state.flights[scope] = flight
            state.noteChange(of: scope, at: now)
            let failure =
                failed.isEmpty
                ? failures.failure(at: now)
                : failures.failure(
                    at: now, waitedSince: flight.waitedSince ?? flight.startedAt, attempts: flight.failedAttempts,
                    retry: retry)
            return (retries, served, failed, failure, next)
        }
        if let next = outcome.next { start(flight: next.flightID, for: next.scope) }
        if let (token, waiters) = outcome.served {
            for waiter in waiters {
                emit(
                    .servedDegraded(
                        scope, fingerprint: token.fingerprint, remaining: remaining(token, at: now), reason: error))
                waiter.resume(with: .success(token))
            }
        }
        for waiter in outcome.failed { waiter.resume(with: .failure(outcome.failure)) }
        wakeAnsweredCallers()
        return outcome.retries
    }
}
