package import Foundation

/// Fetches one token: builds the request, sends it within a timeout on the injected clock,
/// validates the answer, and retries transient failures with backoff. No state of its own:
/// ``TokenEngine`` decides when to fetch and who shares it.
package struct TokenFetcher: Sendable {
    package let endpoint: TokenEndpoint
    package let transport: any HTTPTransport
    package let clock: any WallClock
    package let retry: RetryPolicy
    package let parser: TokenResponseParser
    /// Receives the fetch events.
    package let emit: @Sendable (TokenEvent.Detail) -> Void
    /// Draws the jitter of each backoff, in `0...1`.
    package let randomUnit: @Sendable () -> Double

    package init(
        endpoint: TokenEndpoint, transport: any HTTPTransport, clock: any WallClock, refresh: RefreshPolicy,
        retry: RetryPolicy, rules: TokenRules = TokenRules(), emit: @escaping @Sendable (TokenEvent.Detail) -> Void,
        randomUnit: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.endpoint = endpoint
        self.transport = transport
        self.clock = clock
        self.retry = retry
        self.parser = TokenResponseParser(
            format: endpoint.format, policy: refresh, rules: rules, maximumResponseBytes: endpoint.maximumResponseBytes)
        self.emit = emit
        self.randomUnit = randomUnit
    }

    /// A validated token for `scope`, or the error of the last attempt. Attempts are numbered
    /// from `firstAttempt` (the backoff grows with the number); `deadline` (asked as each
    /// attempt starts) bounds the attempt's timeout; `refusal` may refuse a valid token (one
    /// the fleet service rejected), which then fails the attempt like any token the SDK
    /// refuses; after a transient failure `shouldRetry(error, attempt, retryAt)` decides
    /// whether another attempt follows at `retryAt`.
    @inline(never)
    package func fetch(
        _ scope: AuthorizationScope, firstAttempt: Int = 1, deadline: () -> TimeInterval,
        refusal: (AuthToken) -> FleetAuthError? = { _ in nil },
        shouldRetry: (FleetAuthError, _ attempt: Int, _ retryAt: TimeInterval) -> Bool
    ) async -> Result<AuthToken, FleetAuthError> {
        let start = clock.uptime()
        let fetched = await retrying(scope, firstAttempt: firstAttempt, deadline: deadline, shouldRetry: shouldRetry) {
            attemptDeadline, attempt in
            let (answer, sent) = await sendOnce(scope, attempt: attempt, deadline: attemptDeadline)
            return (validated(answer, for: scope, refusal: refusal), sent)
        } succeeded: { token, finished in
            emitSucceeded(token, for: scope, started: start, finished: finished)
        }
        return Self.handedOut(fetched)
    }

    /// Why a step of a fetch failed, in one object: the steps pass it, and `fetch` and
    /// `exchange` hand out its error. A `Result` that holds a ``FleetAuthError`` (120 bytes)
    /// takes 128 bytes of an async frame for every copy the compiler keeps there, and a fleet
    /// started together holds a fetch's frames for every vehicle at once: with the error and
    /// the answer inline, `fetch` took 2,624 bytes and the request's operation 2,384 (its
    /// closure and `request(to:)`); boxed, 672 and 992.
    private final class Failure: Error {
        let error: FleetAuthError

        init(_ error: FleetAuthError) {
            self.error = error
        }
    }

    /// What a step of a fetch came to: its value, or why it failed.
    private typealias Outcome<Value> = Result<Value, Failure>

    // The synchronous steps of a fetch are functions of their own, not inlined: an async
    // function's frame holds every value its inlined code may keep across a suspension, and
    // a fleet that starts together holds a fetch's frame for every vehicle at once.

    /// The token an answer carries, validated, or why it is refused.
    @inline(never)
    private func validated(
        _ answer: Outcome<Answer>, for scope: AuthorizationScope, refusal: (AuthToken) -> FleetAuthError?
    ) -> Outcome<AuthToken> {
        answer.flatMap { answer in
            Result { () throws(FleetAuthError) -> AuthToken in
                let token = try parser.token(
                    from: answer.response, for: scope, receivedAt: clock.now(), clock: clock,
                    credentialSent: answer.credentialSent)
                if let refused = refusal(token) { throw refused }
                return token
            }
            .mapError { Failure($0.hiding(answer.sentValues)) }
        }
    }

    /// The events of a fetch that succeeded.
    @inline(never)
    private func emitSucceeded(
        _ token: AuthToken, for scope: AuthorizationScope, started: TimeInterval, finished: TimeInterval
    ) {
        emit(
            .fetchSucceeded(
                scope, fingerprint: token.fingerprint, duration: finished - started,
                expiresIn: (token.expiresAtUptime ?? finished) - finished))
        if abs(token.issuerClockOffset) > parser.policy.expiryTolerance {
            emit(.clockDisagreement(scope, fingerprint: token.fingerprint, offset: token.issuerClockOffset))
        }
    }

    /// The final answer to the request a fetch would make, with the same timeouts and
    /// retries, without reading the body: for the endpoint checker, which judges it part by part.
    package func exchange(_ scope: AuthorizationScope) async -> Result<TransportResponse, FleetAuthError> {
        let deadline = clock.uptime() + retry.deadline
        let attempts = retry.maximumAttempts
        let exchanged = await retrying(scope, deadline: { deadline }) { _, attempt, retryAt in
            attempt < attempts && retryAt < deadline
        } attempt: { attemptDeadline, attempt in
            let (answer, sent) = await sendOnce(scope, attempt: attempt, deadline: attemptDeadline)
            let response = answer.flatMap { answer -> Outcome<TransportResponse> in
                let response = answer.response
                if let error = parser.statusError(response, scope: scope, credentialSent: answer.credentialSent),
                    error.isTransient
                {
                    return .failure(Failure(error.adding(scope: scope, url: response.url).hiding(answer.sentValues)))
                }
                return .success(response)
            }
            return (response, sent)
        } succeeded: { _, _ in
        }
        return Self.handedOut(exchanged)
    }

    /// A fetch's outcome as the engine and the checker take it, the error out of its box.
    @inline(never)
    private static func handedOut<Value>(_ outcome: Outcome<Value>) -> Result<Value, FleetAuthError> {
        outcome.mapError(\.error)
    }

    /// Runs `attempt` until it succeeds, fails for good, or `shouldRetry` declines, sleeping
    /// the backoff (or the backend's `Retry-After` if longer) on the clock in between.
    private func retrying<Value>(
        _ scope: AuthorizationScope, firstAttempt: Int = 1, deadline: () -> TimeInterval,
        shouldRetry: (FleetAuthError, _ attempt: Int, _ retryAt: TimeInterval) -> Bool,
        attempt run: (_ deadline: TimeInterval, _ attempt: Int) async -> (Outcome<Value>, sent: Bool),
        succeeded: (Value, _ finished: TimeInterval) -> Void
    ) async -> Outcome<Value> {
        var attempt = max(1, firstAttempt)
        while true {
            let attemptStart = clock.uptime()
            let (result, sent) = await run(deadline(), attempt)
            let finished = clock.uptime()
            switch result {
            case .success(let value):
                succeeded(value, finished)
                return .success(value)
            case .failure(let failure):
                guard
                    let wait = retryWait(
                        after: failure, of: attempt, for: scope, sent: sent, started: attemptStart,
                        finished: finished, shouldRetry: shouldRetry)
                else { return .failure(failure) }
                do {
                    try await clock.sleep(for: wait)
                } catch {
                    return .failure(Failure(Self.cancelled(scope)))
                }
                attempt += 1
            }
        }
    }

    /// How long to wait before the next attempt after `error`, or `nil` for none; emits the
    /// attempt's event.
    @inline(never)
    private func retryWait(
        after failure: Failure, of attempt: Int, for scope: AuthorizationScope, sent: Bool,
        started: TimeInterval, finished: TimeInterval,
        shouldRetry: (FleetAuthError, _ attempt: Int, _ retryAt: TimeInterval) -> Bool
    ) -> TimeInterval? {
        let error = failure.error
        var wait: TimeInterval?
        if error.isTransient, !Task.isCancelled {
            let delay = max(retry.backoff(afterAttempt: attempt, randomUnit: randomUnit()), error.retryAfter ?? 0)
            if shouldRetry(error, attempt, finished + delay) { wait = delay }
        }
        emit(
            sent
                ? .fetchFailed(scope, error: error, duration: finished - started, retryIn: wait)
                : .notSent(scope, error: error, retryIn: wait))
        return wait
    }

    /// An answer to one request, and whether the request carried a credential (a header
    /// ``CredentialHeader`` names one by): a 401 or 403 message tells the two cases apart.
    /// One object, as ``Failure`` is: every step of an attempt passes it.
    private final class Answer: Sendable {
        let response: TransportResponse
        let credentialSent: Bool
        /// The request's header values: what no message made of the answer may show.
        let sentValues: Dictionary<String, String>.Values

        init(response: TransportResponse, credentialSent: Bool, sentValues: Dictionary<String, String>.Values) {
            self.response = response
            self.credentialSent = credentialSent
            self.sentValues = sentValues
        }
    }

    /// One request, bounded by the endpoint's timeout and what is left of the deadline (on the
    /// injected clock, so it is testable): the answer (any status), or why there was none.
    /// The bound covers the app's `headers` closure too, so that a closure that never returns
    /// cannot hold the provider's callers past their deadline. `fetchStarted` is emitted once
    /// the request is built, so only for a request sent (`sent`): a failed or late `headers`
    /// closure or a spent deadline ends the attempt before it.
    private func sendOnce(_ scope: AuthorizationScope, attempt: Int, deadline: TimeInterval) async
        -> (Outcome<Answer>, sent: Bool)
    {
        let timeout = min(endpoint.timeout, deadline - clock.uptime())
        guard timeout > 0 else { return (.failure(Failure(deadlineSpent(for: scope))), false) }
        // What the operation got to, read after it ends or times out.
        let progress = LockedState<TransportRequest?>(nil)
        let outcome: Result<Outcome<Answer>?, any Error>
        do {
            outcome = .success(
                try await clock.withTimeout(
                    timeout, operation(for: scope, timeout: timeout, attempt: attempt, progress: progress)))
        } catch {
            outcome = .failure(error)
        }
        return judged(outcome, sent: progress.withLock { $0 }, for: scope, timeout: timeout)
    }

    /// The operation of one attempt: builds the request, records it in `progress`, sends it.
    /// It captures what it needs, not the whole fetcher, and is made in a function of its
    /// own: its context and the frame of `sendOnce` are held for every request in flight.
    @inline(never)
    private func operation(
        for scope: AuthorizationScope, timeout: TimeInterval, attempt: Int, progress: LockedState<TransportRequest?>
    ) -> @Sendable () async throws -> Outcome<Answer> {
        let (endpoint, transport, emit) = (self.endpoint, self.transport, self.emit)
        return {
            let request: TransportRequest
            switch await Self.request(
                to: endpoint, for: scope, timeout: timeout, attempt: attempt, progress: progress, emit: emit)
            {
            case .success(let built): request = built
            case .failure(let error): return .failure(error)
            }
            return .success(Self.answer(try await transport.send(request), to: request))
        }
    }

    /// The attempt's request, built (the app's `headers` closure runs here) and recorded in
    /// `progress` as sent, with `fetchStarted` emitted; or why it could not be built.
    @inline(never)
    private static func request(
        to endpoint: TokenEndpoint, for scope: AuthorizationScope, timeout: TimeInterval, attempt: Int,
        progress: LockedState<TransportRequest?>, emit: @Sendable (TokenEvent.Detail) -> Void
    ) async -> Outcome<TransportRequest> {
        let built: Outcome<TransportRequest>
        do throws(FleetAuthError) {
            built = .success(try await endpoint.request(for: scope))
        } catch {
            built = .failure(Failure(error))
        }
        return recorded(built, for: scope, timeout: timeout, attempt: attempt, progress: progress, emit: emit)
    }

    /// The request built for an attempt with its timeout, recorded in `progress` as sent, with
    /// `fetchStarted` emitted; or why it could not be built.
    @inline(never)
    private static func recorded(
        _ built: Outcome<TransportRequest>, for scope: AuthorizationScope, timeout: TimeInterval, attempt: Int,
        progress: LockedState<TransportRequest?>, emit: @Sendable (TokenEvent.Detail) -> Void
    ) -> Outcome<TransportRequest> {
        guard case .success(var request) = built else { return built }
        request.timeout = timeout
        progress.withLock { $0 = request }
        emit(.fetchStarted(scope, attempt: attempt))
        return .success(request)
    }

    /// The answer `response` is to `request`.
    @inline(never)
    private static func answer(_ response: TransportResponse, to request: TransportRequest) -> Answer {
        Answer(
            response: response, credentialSent: CredentialHeader.carriesCredential(request.headers),
            sentValues: request.headers.values)
    }

    /// What one request came to: `outcome` is the operation's result (`nil`: it timed out) or
    /// what it threw; `request` is the request once it was built and sent.
    @inline(never)
    private func judged(
        _ outcome: Result<Outcome<Answer>?, any Error>, sent request: TransportRequest?,
        for scope: AuthorizationScope, timeout: TimeInterval
    ) -> (Outcome<Answer>, sent: Bool) {
        switch outcome {
        case .failure(let error):
            guard let request else {
                // Only the request's building throws before it is recorded: cancellation.
                return (.failure(Failure(Self.cancelled(scope))), false)
            }
            return (.failure(Failure(Self.failure(error, of: request, for: scope))), true)
        case .success(.success(let answer)?):
            return (.success(answer), true)
        case .success(.failure(let failure)?):
            // The headers closure saw this fetch cancelled: that is the sign-out, not the app's credential.
            if Task.isCancelled, failure.error.underlyingError is CancellationError {
                return (.failure(Failure(Self.cancelled(scope))), false)
            }
            return (.failure(failure), false)
        case .success(nil):
            guard let request else {
                let error = FleetAuthError(
                    reason: .credentialsUnavailable,
                    message:
                        "The header provider did not return within \(String(format: "%.1f", timeout)) s, so no request was sent; make sure it returns or throws (an app credential that cannot be had should throw).",
                    scope: scope)
                return (.failure(Failure(error)), false)
            }
            return (.failure(Failure(timedOut(request, for: scope, after: timeout))), true)
        }
    }

    /// The error of an attempt the retry deadline left no time for.
    @inline(never)
    private func deadlineSpent(for scope: AuthorizationScope) -> FleetAuthError {
        FleetAuthError(
            reason: .timedOut,
            message:
                "The retry deadline ran out before another request to the token backend could be sent; check that the backend is up, or raise the retry deadline.",
            scope: scope, url: try? endpoint.baseRequest(for: scope).url)
    }

    /// Why a request that was sent got no answer: the transport's error, or cancellation.
    @inline(never)
    private static func failure(_ error: any Error, of request: TransportRequest, for scope: AuthorizationScope)
        -> FleetAuthError
    {
        if let error = error as? FleetAuthError {
            return error.adding(scope: scope, url: request.url).hiding(request.headers.values)
        }
        if error is CancellationError, Task.isCancelled { return cancelled(scope) }
        return FleetAuthError(
            reason: .transportFailure,
            message:
                "The request to the token backend failed before an answer arrived (\(TransportFailureReason.describe(error))); check that the backend is up, the host name and connectivity.",
            scope: scope, url: request.url, underlyingError: error)
    }

    /// The error of a request that got no answer within `timeout`, naming the bound it hit.
    @inline(never)
    private func timedOut(_ request: TransportRequest, for scope: AuthorizationScope, after timeout: TimeInterval)
        -> FleetAuthError
    {
        // Under a tenth of a second (a last attempt cut by the deadline), in milliseconds: "0.0 s"
        // would read as no time at all.
        let waited =
            timeout < 0.1 ? "\(Int((timeout * 1000).rounded(.up))) ms" : "\(String(format: "%.1f", timeout)) s"
        let bound =
            timeout < endpoint.timeout
            ? "what was left of the retry deadline for the callers' whole wait (\(SpokenDuration.describe(retry.deadline))); each attempt may take the endpoint's timeout (\(SpokenDuration.describe(endpoint.timeout))). Check that the backend is up; to wait longer, raise both: `TokenEndpoint(…, timeout:)` and the provider's `retry: RetryPolicy(deadline:)`"
            : "the endpoint's timeout for one attempt. Check that the backend is up and answers in time, or raise `TokenEndpoint(…, timeout:)`"
        return FleetAuthError(
            reason: .timedOut, message: "The token backend did not answer within \(waited), \(bound).",
            scope: scope, url: request.url)
    }

    /// The error of a cancelled fetch: only `invalidateAll()` cancels one.
    @inline(never)
    private static func cancelled(_ scope: AuthorizationScope) -> FleetAuthError {
        FleetAuthError(
            reason: .signedOut, message: "The fetch was cancelled because every token was invalidated (sign-out).",
            scope: scope)
    }
}
