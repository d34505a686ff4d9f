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
            let waiter = withStateAndPublish { $0.cancel(waiter: waiterID, of: scope) }
            if let waiter { waiter.resume(with: .failure(CancellationError())) }
            wakeAnsweredCallers()
        }
    }

    /// Not inlined into the wait: every caller waiting for a fetch holds the wait's frame.
    @inline(never)
    private func register(
        _ continuation: Flight.Waiter, as waiterID: UInt64, for scope: AuthorizationScope, forced: Bool
    ) {
        let now = clock.uptime()
        let registration = withStateAndPublish { state in
            state.register(
                continuation, as: waiterID, for: scope, forced: forced, cancelled: Task.isCancelled, at: now)
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
        let orphaned = withStateAndPublish { state -> Bool in
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
        let firstAttempt = state.withLock { $0.begin(flight: flightID, for: scope, at: started) }
        let retry = configuration.retry
        let result = await fetcher.fetch(
            scope, firstAttempt: firstAttempt,
            deadline: { state.withLock { $0.callersDeadline(of: flightID, for: scope, retry: retry) } },
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

    /// Stores a finished flight's outcome and answers its waiters (``TokenEngineState/flightEnded(flight:for:with:startedAt:at:_:)``).
    /// Not inlined, as `attemptFailed` is not: the flight's async frame would hold their
    /// every value, for every flight of a fleet at once.
    @inline(never)
    private func finish(
        flight flightID: UInt64, for scope: AuthorizationScope, with fetched: Result<AuthToken, FleetAuthError>,
        startedAt started: TimeInterval
    ) {
        let now = clock.uptime()
        let allowanceUnit = fetcher.randomUnit()
        let spreadUnit = fetcher.randomUnit()
        // The gate's wait after a failed fetch is drawn: a fleet failing together does not
        // come back together (a fetched token found reissued waits the middle of the draw).
        let waitUnit: Double
        if case .failure = fetched { waitUnit = fetcher.randomUnit() } else { waitUnit = 0.5 }
        let inputs = TokenEngineState.FlightEndInputs(
            refresh: configuration.refresh, retry: configuration.retry, wallNow: clock.now(),
            allowanceUnit: allowanceUnit, spreadUnit: spreadUnit, waitUnit: waitUnit)
        let after = withStateAndPublish { state in
            state.flightEnded(flight: flightID, for: scope, with: fetched, startedAt: started, at: now, inputs)
        }
        if let next = after.nextInQueue { start(flight: next.flightID, for: next.scope) }
        if let evicted = after.evicted {
            emit(.evicted(evicted.scope, usable: evicted.usable, capacity: configuration.cacheCapacity))
        }
        for waiter in after.waiters { waiter.resume(with: after.answer.mapError { $0 as any Error }) }
        wakeAnsweredCallers()
        wake(after.idleWaiters)
    }

    /// The error of a fetch that returned the token the fleet service had just rejected.
    static func reissued(_ scope: AuthorizationScope) -> FleetAuthError {
        FleetAuthError(
            reason: .rejectedTokenReissued,
            message:
                "The backend returned the token the fleet service had just rejected; it must mint a new token when asked again.",
            scope: scope)
    }

    /// Records a failed attempt of flight `flightID` (``TokenEngineState/attemptFailed(flight:for:error:attempt:retryAt:at:retry:)``),
    /// answers the callers it settles, and says whether another attempt follows at `retryAt`.
    @inline(never)
    private func attemptFailed(
        flight flightID: UInt64, for scope: AuthorizationScope, error: FleetAuthError, attempt: Int,
        retryAt: TimeInterval
    ) -> Bool {
        let now = clock.uptime()
        let retry = configuration.retry
        let after = withStateAndPublish { state in
            state.attemptFailed(
                flight: flightID, for: scope, error: error, attempt: attempt, retryAt: retryAt, at: now, retry: retry)
        }
        if let next = after.nextInQueue { start(flight: next.flightID, for: next.scope) }
        if let (token, waiters) = after.degraded {
            for waiter in waiters {
                emit(
                    .servedDegraded(
                        scope, fingerprint: token.fingerprint, remaining: remaining(token, at: now), reason: error))
                waiter.resume(with: .success(token))
            }
        }
        for waiter in after.failed { waiter.resume(with: .failure(after.failure)) }
        wakeAnsweredCallers()
        return after.retries
    }
}
