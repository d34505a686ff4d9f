package import FleetAuthCore
import Foundation

/// Getting a usable token for a call, and sending the call with it.
extension AuthorizedCaller {
    /// How long ago the token was minted, by its lifetime less the life it has left on the
    /// monotonic clock; `nil` without a monotonic expiry.
    func mintedAge(of token: AuthToken) -> TimeInterval? {
        guard token.expiresAtUptime != nil, token.lifetime > 0 else { return nil }
        return max(0, token.lifetime - token.remainingLife(wallNow: clock.now()))
    }

    /// A closing sentence for a 401 or 403 when the token's backend's clock disagreed with
    /// the device's by more than a minute: the fleet service judges `iat` and `exp` by true time.
    static func clockNote(_ token: AuthToken) -> String {
        let offset = token.issuerClockOffset
        guard abs(offset) > 60 else { return "" }
        let spoken = SpokenDuration.describe(offset)
        return
            " When this token arrived the backend's clock was \(spoken) \(offset > 0 ? "ahead of" : "behind") this device's, and the fleet service judges `iat` and `exp` by true time: if this device's clock is right, the backend's clock may be off by \(spoken)."
    }

    /// `PUT /v1/providers/p/vehicles/v-42`: the method and path, never query values.
    static func call(_ request: TransportRequest) -> String {
        "\(request.method) \(request.url.path)"
    }

    /// The token for the next call: the cached one if usable (one lookup, as the call's own
    /// would be), else ``usableToken()`` in a task of its own, which this waits for. The
    /// reporter hands the token to ``deliver(authorized:token:urlChecked:)``.
    ///
    /// A task keeps the task allocator's slabs its deepest wait took until it ends, and the
    /// wait for a fetch (the caller's steps, the provider's, the engine's) is the deepest a
    /// simulated vehicle's task makes: made in the vehicle's own task, it kept a kilobyte a
    /// vehicle for the fleet's life that its updates never use again. The task costs as much
    /// while the wait lasts, so a fleet whose vehicles all wait at once holds a little more at
    /// that moment (the Performance article of FleetAuthCore has the figures). The wait's task
    /// inherits the caller's priority and task-local values, not a task executor preference:
    /// on a simulated clock it prefers the clock's executor, elsewhere the global one.
    nonisolated(nonsending) package func tokenForCall() async throws -> AuthToken {
        if let cached = cachedUsableToken() { return cached }
        return try await usableTokenFromTaskOfItsOwn()
    }

    /// The token for a call made in a task that ends with the call (each update of
    /// `VehicleReporter` runs in one): the cached one if usable, else ``usableToken()``
    /// waited for in this task, whose frames go when the call ends.
    nonisolated(nonsending) package func tokenForCallInThisTask() async throws -> AuthToken {
        if let cached = cachedUsableToken() { return cached }
        return try await usableToken()
    }

    /// The provider's cached token for the context, if the caller can use it: one lookup.
    private func cachedUsableToken() -> AuthToken? {
        guard let cached = authorization.cachedUsableToken(for: context), !isExpired(cached) else { return nil }
        return cached
    }

    /// ``usableToken()``, made in a task started on the caller's clock, whose frames go when it
    /// ends; cancelling the caller cancels it. The first token's wait, and the fresh token's
    /// after a rejection. A caller cancelled already waits in its own task, as the engine then
    /// starts no fetch for it.
    @inline(never)
    func usableTokenFromTaskOfItsOwn() async throws -> AuthToken {
        if Task.isCancelled { return try await usableToken() }
        let caller = self
        let wait = clock.startThrowingTask { try await caller.usableToken() }
        return try await withTaskCancellationHandler {
            try await wait.value
        } onCancel: {
            wait.cancel()
        }
    }

    /// A token that has not expired by what the caller can tell; an expired one is
    /// invalidated and replaced once.
    func usableToken() async throws -> AuthToken {
        let token = try await fetch()
        guard isExpired(token) else { return token }
        authorization.invalidate(token.value, for: context)
        let again = try await fetch()
        guard isExpired(again) else { return again }
        try expiredTwice(again)
    }

    /// Throws the error of a provider that returned an expired token twice.
    @inline(never)
    private func expiredTwice(_ token: AuthToken) throws -> Never {
        throw FleetServiceError(
            fault: .token,
            message:
                "The provider returned an expired token twice; nothing was sent. Check the provider's cache and the backend's clock.",
            scope: scope, tokenFingerprint: token.fingerprint,
            underlyingError: FleetAuthError(reason: .tokenExpired, message: "The token has expired.", scope: scope))
    }

    /// How long a provider may take to answer before the call fails: a provider that never
    /// calls its completion cannot hold the call forever. (FleetAuth's provider answers
    /// within its retry deadline, 30 s by default, and is not raced: see
    /// `SelfBoundedAuthorization`.)
    static var providerDeadline: TimeInterval { 60 }

    func fetch() async throws -> AuthToken {
        // A cached token is answered at once: no timer, no task.
        if let token = authorization.cachedUsableToken(for: context) { return token }
        let answer: AuthToken?
        do {
            if authorization is any SelfBoundedAuthorization {
                // FleetAuth's provider answers within its retry deadline: no race, no tasks.
                answer = try await authorization.token(for: context)
            } else {
                answer = try await fetchRacingDeadline()
            }
        } catch {
            try fetchFailure(error)
        }
        guard let answer else { try providerSilent() }
        return answer
    }

    /// The token of a provider of the app's own, or `nil` when it did not answer within
    /// ``providerDeadline``. A function of its own: its race's values take no room in the
    /// frame of a wait on FleetAuth's provider.
    @inline(never)
    private func fetchRacingDeadline() async throws -> AuthToken? {
        let (authorization, context) = (self.authorization, self.context)
        return try await clock.withTimeout(Self.providerDeadline) { try await authorization.token(for: context) }
    }

    // The errors are made and thrown in functions of their own, not inlined: the frame of an
    // async function holds what its inlined code may keep across a suspension (a thrown
    // `FleetServiceError` is 104 bytes), and every vehicle of a fleet that starts together
    // waits in `fetch()` at once.

    /// Throws the error of a fetch that threw `error`.
    @inline(never)
    private func fetchFailure(_ error: any Error) throws -> Never {
        if let error = error as? FleetAuthError, error.reason == .rejectedTokenReissued {
            let cause = lastRejection.withLock { $0 }.map { FleetAuthError.reissued(rejection: $0, scope: scope) }
            throw FleetServiceError(
                fault: .token, message: (cause ?? error).message, scope: scope, underlyingError: cause ?? error)
        }
        // The token URL as sent, which the message of a 404 or a refused credential needs.
        let url = (error as? FleetAuthError)?.redactedURL.map { " (token URL \($0))" } ?? ""
        throw FleetServiceError(
            fault: .token,
            message: "No token could be fetched for \(scope)\(url): \(TransportFailureReason.describe(error))",
            scope: scope,
            underlyingError: error)
    }

    /// Throws the error of a provider that did not answer within ``providerDeadline``.
    @inline(never)
    private func providerSilent() throws -> Never {
        throw FleetServiceError(
            fault: .token,
            message:
                "The token provider did not answer within \(Int(Self.providerDeadline)) s, so nothing was sent; a provider must call its completion exactly once, with a token or an error.",
            scope: scope)
    }

    /// Expired by the token's monotonic expiry on the clock of the provider that fetched it
    /// (no change of the device's time moves that, and the caller's clock does not
    /// matter), else by its wall expiry (unknown expiries never are).
    func isExpired(_ token: AuthToken) -> Bool {
        token.remainingLife(wallNow: clock.now()) <= 0
    }

    /// Sends `request` with `token` through the transport. Written into its callers: every
    /// call in flight held its frame (416 bytes) beside the delivery's, which with it inlined
    /// grew by 304.
    @inline(__always)
    nonisolated(nonsending) func send(_ request: TransportRequest, with token: AuthToken)
        async throws -> TransportResponse
    {
        try await send(authorized: Self.authorized(request, with: token), with: token)
    }

    /// Sends `request`, which carries `token` already, through the transport; throws the
    /// error of a call that got no answer. Written into its callers, as ``send(_:with:)``.
    @inline(__always)
    nonisolated(nonsending) func send(authorized request: TransportRequest, with token: AuthToken)
        async throws -> TransportResponse
    {
        do {
            return try await transport.send(request)
        } catch {
            try noAnswer(to: request, with: token, error: error)
        }
    }

    /// `request` with `Authorization: Bearer <token>` in place of any authorization it had.
    @inline(never)
    private static func authorized(_ request: TransportRequest, with token: AuthToken) -> TransportRequest {
        var request = request
        authorize(&request.headers, with: token)
        return request
    }

    /// Puts `Authorization: Bearer <token>` in `headers`, in place of any authorization they
    /// had: every authorized request's, the reporter's updates included.
    package static func authorize(_ headers: inout [String: String], with token: AuthToken) {
        for name in headers.keys where HeaderLookup.sameName(name, "Authorization") {
            headers[name] = nil
        }
        headers["Authorization"] = token.authorizationHeader
    }

    /// Throws the error of a fleet call that got no answer: a `caller` fault when the transport
    /// refused to send the request as it was given (`invalidConfiguration`: a header that
    /// cannot be sent, an app session that cannot carry it), which no retry changes; else a
    /// `network` fault, in the transport's words when it says no retry helps (`insecureEndpoint`:
    /// a TLS or trust failure, such as a certificate the device does not trust, a client
    /// certificate required or refused, a challenge the app's delegate cancelled), else as one
    /// a retry may get through.
    @inline(never)
    private func noAnswer(to request: TransportRequest, with token: AuthToken, error: any Error) throws -> Never {
        if let refusal = error as? FleetAuthError, refusal.code == .invalidConfiguration {
            throw FleetServiceError(
                fault: refusal.reason == .insecureEndpoint ? .network : .caller,
                message: "\(Self.call(request)): \(refusal.message)", scope: scope,
                tokenFingerprint: token.fingerprint, underlyingError: error)
        }
        throw FleetServiceError(
            fault: .network,
            message:
                "\(Self.call(request)) to the fleet service got no answer (\(TransportFailureReason.describe(error))). Check connectivity and the fleet service URL; the call can be retried.",
            scope: scope, tokenFingerprint: token.fingerprint, underlyingError: error)
    }
}
