public import FleetAuthCore
package import Foundation

/// Sends an app's own fleet-service calls with a token for one context, the way
/// `VehicleReporter` and `TripMonitor` send theirs.
///
/// For every call:
/// - the token is fetched at call time through the provider (a cached one costs nothing);
/// - a token known to have expired is never sent: it is invalidated and replaced once;
/// - on 401 or 403 exactly that token is invalidated and the request is sent once more with
///   a fresh token, except a 403 for a token minted within the last minute: the backend
///   would mint the same permissions again, so the call stops at once and says so;
/// - failures become ``FleetServiceError`` values naming the fault, the fleet service's own
///   reason first; no token value appears in any of them.
///
/// <!-- snippet setup:
/// import FleetAuthDriver
/// import FleetAuthURLSession
/// import Foundation
/// let provider = try DriverTokenProvider(
///     endpoint: TokenEndpoint(url: "https://api.example.com/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp), transport: URLSessionTransport())
/// let vehicleURL = URL(string: "https://fleet.example.com/v1/providers/my-project/vehicles/v-42")!
/// -->
/// ```swift
/// let caller = AuthorizedCaller(
///     context: DriverAuthorizationContext(vehicleID: "v-42"), authorization: provider,
///     transport: URLSessionTransport())
/// let response = try await caller.send(TransportRequest(method: "GET", url: vehicleURL))
/// ```
///
/// To authorize every request of another HTTP client, wrap its transport in
/// ``AuthorizingTransport``, or call ``perform(_:status:)`` from its middleware.
public struct AuthorizedCaller<Context: AuthorizationContext>: Sendable {
    /// An accepted call: the 2xx response, the token that carried it, and whether a
    /// rejected token made it take a second request.
    package struct Delivery: Sendable {
        package let response: TransportResponse
        package let tokenFingerprint: String
        package let attempts: Int

        /// What a receipt keeps of it.
        package var outcome: Outcome {
            Outcome(status: response.status, tokenFingerprint: tokenFingerprint, attempts: attempts)
        }
    }

    /// What a receipt keeps of a delivery: its status, the fingerprint of the token that
    /// carried it and how many requests it took. Four words, which an async call returns in
    /// registers: the frame of every update in flight keeps no room for a whole response.
    package struct Outcome: Sendable {
        package let status: Int
        package let tokenFingerprint: String
        package let attempts: Int
    }

    /// The context every call's token is fetched for.
    public let context: Context
    let authorization: any TokenAuthorization<Context>
    let transport: any HTTPTransport
    package let clock: any WallClock
    /// What the fleet service said when it last refused a token of this caller's: the cause
    /// named when the backend hands the same token back.
    let lastRejection = LockedState<TokenRejection?>(nil)

    /// Creates a caller for `context` that fetches its tokens through `authorization` and
    /// sends through `transport`. `clock` judges whether a token without a monotonic expiry
    /// of its own (one from a provider other than FleetAuth's) has expired, and bounds how
    /// long the provider may take; by default the system clock.
    public init<Authorization: TokenAuthorization<Context>>(
        context: Context, authorization: Authorization, transport: any HTTPTransport,
        clock: (any WallClock)? = nil
    ) {
        self.context = context
        self.authorization = authorization
        self.transport = transport
        self.clock = clock ?? SystemWallClock()
    }

    var scope: AuthorizationScope { context.scope }

    /// A token minted (by its life used) less than this long ago counts as fresh: a 403
    /// for it is the backend's minting, which a refetch repeats.
    static var freshTokenAge: TimeInterval { 60 }

    // MARK: - Calls

    /// Sends `request` with `Authorization: Bearer <token>` and returns the 2xx response.
    ///
    /// Throws a `token` fault when no usable token can be had or the fleet service refuses
    /// a fresh one, `network` when no answer came, `service` for another status (the
    /// response's status is in the error), and `caller` for a URL that would send the token
    /// in clear text (plain http to a host other than loopback).
    public func send(_ request: TransportRequest) async throws(FleetServiceError) -> TransportResponse {
        try await deliver(request).response
    }

    /// Runs `attempt` with the `Authorization` header's value (`Bearer <token>`) and
    /// returns what it returns, applying the same rule as ``send(_:)``:
    /// when `status` reads 401 or 403 from the result, that token is invalidated and
    /// `attempt` runs once more with a fresh one (not after a 403 for a token minted within
    /// the last minute). The last result is returned whatever its status.
    ///
    /// This is the form for another HTTP client's middleware, whose next step is a closure.
    /// `attempt` may run twice: its request body must be sendable twice. Errors `attempt`
    /// throws pass through unchanged; a token that cannot be had throws ``FleetServiceError``
    /// with the `token` fault.
    public func perform<Response>(
        _ attempt: (_ authorization: String) async throws -> Response, status: (Response) -> Int
    ) async throws -> Response {
        try await exchange(
            { token in try await attempt(token.authorizationHeader) }, status: status, body: { _ in Data() }
        )
        .response
    }

    /// Sends `request` and returns the 2xx response with the token that carried it: the
    /// form the reporter and the monitor use for their receipts.
    package func deliver(_ request: TransportRequest) async throws(FleetServiceError) -> Delivery {
        do {
            return try await untypedDelivery(of: request)
        } catch {
            try FleetServiceError.rethrow(error, scope: scope)
        }
    }

    /// ``deliver(_:)``'s steps, throwing untyped.
    ///
    /// It, ``deliver(authorized:token:urlChecked:)`` and every step below them throw only
    /// ``FleetServiceError``, untyped, and a step makes its error in a function that throws
    /// it: a public call converts what they throw with
    /// `FleetServiceError.rethrow(_:scope:)`, which names anything else a `network` fault. A
    /// step added here must keep to that.
    ///
    /// The rule's first request is written out here, as in ``exchange(_:)``,
    /// and everything after an answer other than a 2xx in a function of its own: every call
    /// in flight holds this frame, and with the exchange inlined it was three times larger
    /// (1,680 bytes against 512). It, `tokenForCall()` (with a cached token) and
    /// `send(_:with:)` run on their caller's executor (`nonisolated(nonsending)`): a hop
    /// between executors at each step costs a task switch, and a simulator makes millions of
    /// calls.
    nonisolated(nonsending) func untypedDelivery(of request: TransportRequest) async throws -> Delivery {
        try checkTransport(request.url)
        let token = try await tokenForCall()
        let response = try await send(request, with: token)
        guard (200...299).contains(response.status) else {
            return try await delivery(of: request, answered: response, token: token)
        }
        return Delivery(response: response, tokenFingerprint: token.fingerprint, attempts: 1)
    }

    /// The delivery of a request that carries `token` already (``authorize(_:with:)`` on its
    /// headers), to a URL the caller has judged already (`urlChecked`), as its
    /// outcome: the reporter's. Its caller's frame holds the request anyway, so this frame
    /// holds no authorized copy of it, and no room for a whole delivery: every update in
    /// flight holds both frames (with them, an update's frames fit two of the task
    /// allocator's slabs, not three).
    nonisolated(nonsending) package func deliver(
        authorized request: TransportRequest, token: AuthToken, urlChecked: Bool
    )
        async throws -> Outcome
    {
        assert(request.header("Authorization") == token.authorizationHeader, "authorize(_:with:) first")
        if !urlChecked { try checkTransport(request.url) }
        let response = try await send(authorized: request, with: token)
        guard (200...299).contains(response.status) else {
            return try await outcome(of: request, answered: response, token: token)
        }
        return Outcome(status: response.status, tokenFingerprint: token.fingerprint, attempts: 1)
    }

    /// ``delivery(of:answered:token:)``'s outcome. Its own frame holds the delivery, after
    /// an answer other than a 2xx only.
    @inline(never)
    private func outcome(of request: TransportRequest, answered response: TransportResponse, token: AuthToken)
        async throws -> Outcome
    {
        try await delivery(of: request, answered: response, token: token).outcome
    }

    /// The delivery of `request` after its first answer, `response`, was not a 2xx: the rest
    /// of the rule after a 401 or 403, then throws the error of a call that did not end in a 2xx.
    @inline(never)
    private func delivery(of request: TransportRequest, answered response: TransportResponse, token: AuthToken)
        async throws -> Delivery
    {
        let exchange =
            Self.refuses(response.status)
            ? try await exchange(request, after: response, refusedWith: token)
            : Exchange(response: response, token: token, attempts: 1)
        if let refusal = exchange.refusal {
            try refusalError(refusal, of: request, response: exchange.response, token: exchange.token)
        }
        guard (200...299).contains(exchange.response.status) else {
            try statusError(exchange.response, of: request, token: exchange.token)
        }
        return Delivery(
            response: exchange.response, tokenFingerprint: exchange.token.fingerprint, attempts: exchange.attempts)
    }

    // The errors are made and thrown in functions of their own, not inlined: an async
    // function's frame holds what its inlined code may keep across a suspension (a thrown
    // `FleetServiceError` is 104 bytes), for every call in flight.

    /// Throws the error of a call the fleet service's 401/403 ended.
    @inline(never)
    private func refusalError(
        _ refusal: Refusal, of request: TransportRequest, response: TransportResponse, token: AuthToken
    ) throws -> Never {
        let (rejection, reason) =
            switch refusal {
            case .freshToken(let age, let rejection):
                (
                    rejection,
                    "The fleet service refused a token minted \(Int(age)) s ago (\(rejection)) for \(Self.call(request)); a new token from the same backend would carry the same permissions, so the call was not repeated. Fix what the fleet service names (claim key, IDs, project, audience) in the backend's minting."
                )
            case .again(let rejection):
                (
                    rejection,
                    "The fleet service refused a freshly fetched token too (\(rejection)) for \(Self.call(request)); a refetch cannot fix this: check that the backend mints tokens for this provider, audience and \(scope.kind)."
                )
            }
        throw FleetServiceError(
            fault: .token, message: reason + Self.clockNote(token), scope: scope, status: response.status,
            tokenFingerprint: token.fingerprint, underlyingError: rejection)
    }

    /// Throws the error of a call the fleet service answered with a status other than 2xx, 401
    /// or 403.
    @inline(never)
    private func statusError(_ response: TransportResponse, of request: TransportRequest, token: AuthToken)
        throws -> Never
    {
        let advice =
            switch response.status {
            case 404: "check the provider ID, the \(scope.kind) ID and the fleet flavor"
            case 500...599: "the fleet service failed; try again later"
            default: "check the request"
            }
        throw FleetServiceError(
            fault: .service,
            message: "The fleet service answered HTTP \(response.status) to \(Self.call(request)); \(advice).",
            scope: scope, status: response.status, tokenFingerprint: token.fingerprint)
    }

    /// Sends `request` under the rule and returns the last response whatever its status:
    /// the form of ``AuthorizingTransport``.
    package func respond(to request: TransportRequest) async throws(FleetServiceError) -> TransportResponse {
        do {
            return try await exchange(request).response
        } catch {
            try FleetServiceError.rethrow(error, scope: scope)
        }
    }

    // MARK: - The rule

    /// What one call came to: the last response, the token that carried it, how many
    /// requests it took, and why a 401/403 ended it, if one did.
    private struct Exchange<Response> {
        var response: Response
        var token: AuthToken
        var attempts: Int
        var refusal: Refusal?
    }

    /// Why the fleet service's 401/403 ended a call.
    private enum Refusal {
        /// A 403 for a token minted `age` seconds ago: a refetch would repeat it.
        case freshToken(age: TimeInterval, TokenRejection)
        /// The fresh token was refused too.
        case again(TokenRejection)
    }

    /// The rule below over a request: its first request here, the rest in
    /// ``exchange(_:after:refusedWith:)``.
    private func exchange(_ request: TransportRequest) async throws -> Exchange<TransportResponse> {
        try checkTransport(request.url)
        let token = try await tokenForCall()
        let response = try await send(request, with: token)
        guard Self.refuses(response.status) else { return Exchange(response: response, token: token, attempts: 1) }
        return try await exchange(request, after: response, refusedWith: token)
    }

    /// ``exchange(after:refusedWith:_:status:body:)`` for a request.
    @inline(never)
    private func exchange(_ request: TransportRequest, after response: TransportResponse, refusedWith token: AuthToken)
        async throws -> Exchange<TransportResponse>
    {
        try await exchange(
            after: response, refusedWith: token, { token in try await send(request, with: token) },
            status: \.status, body: \.body)
    }

    /// The rule itself, over any way of sending: `attempt` sends with the token it is given.
    @inline(__always)
    private func exchange<Response>(
        _ attempt: (AuthToken) async throws -> Response, status: (Response) -> Int, body: (Response) -> Data
    ) async throws -> Exchange<Response> {
        // A cached token that has not expired is taken without a call that could suspend.
        let token = try await tokenForCall()
        let response = try await attempt(token)
        guard Self.refuses(status(response)) else { return Exchange(response: response, token: token, attempts: 1) }
        return try await exchange(after: response, refusedWith: token, attempt, status: status, body: body)
    }

    /// The rule after a 401 or 403 for `token`: drop it, then stop (a fresh token's 403) or
    /// send once more with a new one. Not inlined: it is rare, and its values would take
    /// room in the frame of every call in flight.
    @inline(never)
    private func exchange<Response>(
        after response: Response, refusedWith token: AuthToken, _ attempt: (AuthToken) async throws -> Response,
        status: (Response) -> Int, body: (Response) -> Data
    ) async throws -> Exchange<Response> {
        let rejection = TokenRejection(status: status(response), body: body(response), token: token.value)
        drop(token, rejectedWith: rejection)
        if status(response) == 403, let age = mintedAge(of: token), age < Self.freshTokenAge {
            return Exchange(response: response, token: token, attempts: 1, refusal: .freshToken(age: age, rejection))
        }
        let fresh = try await usableTokenFromTaskOfItsOwn()
        let second = try await attempt(fresh)
        guard Self.refuses(status(second)) else { return Exchange(response: second, token: fresh, attempts: 2) }
        let again = TokenRejection(status: status(second), body: body(second), token: fresh.value)
        drop(fresh, rejectedWith: again)
        return Exchange(response: second, token: fresh, attempts: 2, refusal: .again(again))
    }

    private static func refuses(_ status: Int) -> Bool { status == 401 || status == 403 }

    /// Drops the token the fleet service refused, and remembers what the service said.
    private func drop(_ token: AuthToken, rejectedWith rejection: TokenRejection) {
        lastRejection.withLock { $0 = rejection }
        authorization.invalidate(token.value, for: context)
    }

    // MARK: - Requests

    /// Refuses a URL that would carry the token in clear text, before a token is fetched.
    /// Not inlined: every call in flight would hold its messages' room in its frame.
    @inline(never)
    package func checkTransport(_ url: URL) throws(FleetServiceError) {
        switch TokenCarryingURL.judge(scheme: url.scheme, host: url.host) {
        case .allowed: return
        case .notAbsolute, .unsupportedScheme:
            let scheme = url.scheme?.lowercased()
            throw FleetServiceError(
                fault: .caller,
                message:
                    "The request's URL is not an absolute https URL (scheme \(scheme.map { "`\($0)`" } ?? "missing")). Nothing was sent.",
                scope: scope)
        case .clearText(let host):
            throw FleetServiceError(
                fault: .caller,
                message:
                    "The request uses plain http to \(host), which would send the token in clear text; use https (plain http only to loopback). Nothing was sent.",
                scope: scope)
        }
    }
}
