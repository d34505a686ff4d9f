package import FleetAuthCore
import Foundation

/// Sends one fleet-service request with a bearer token, the way both the vehicle reporter
/// and the trip monitor need it:
/// - the token is fetched at call time through the app's provider;
/// - a token known to have expired is never sent: it is invalidated and replaced once;
/// - on 401 or 403 exactly that token is invalidated and the request is sent once more
///   with a fresh token, except a 403 for a token minted within the last minute: the
///   backend would mint the same permissions again, so the call stops at once and says so;
/// - failures become ``FleetServiceError`` values naming the fault, the fleet service's own
///   reason first.
package struct AuthorizedCaller<Context: AuthorizationContext>: Sendable {
    /// An accepted call: the 2xx response, the token that carried it, and whether a
    /// rejected token made it take a second request.
    package struct Delivery: Sendable {
        package let response: TransportResponse
        package let tokenFingerprint: String
        package let attempts: Int
    }

    package let context: Context
    package let authorization: any TokenAuthorization<Context>
    package let transport: any HTTPTransport
    package let clock: any WallClock

    /// Creates a caller for `context` that fetches its tokens through `authorization`.
    package init<Authorization: TokenAuthorization<Context>>(
        context: Context, authorization: Authorization, transport: any HTTPTransport, clock: any WallClock
    ) {
        self.context = context
        self.authorization = authorization
        self.transport = transport
        self.clock = clock
    }

    private var scope: AuthorizationScope { context.scope }

    /// A token minted (by its life used) less than this long ago counts as fresh: a 403
    /// for it is the backend's minting, which a refetch repeats.
    static var freshTokenAge: TimeInterval { 60 }

    /// Sends `request` with a bearer token and returns the 2xx response.
    package func send(_ request: TransportRequest) async throws(FleetServiceError) -> Delivery {
        var token = try await usableToken()
        var response = try await send(request, with: token)
        var attempts = 1
        if response.status == 401 || response.status == 403 {
            let rejection = Self.rejection(response, token)
            authorization.invalidate(token.value, for: context, rejection: rejection)
            if response.status == 403, let age = mintedAge(of: token), age < Self.freshTokenAge {
                throw FleetServiceError(
                    fault: .token,
                    message:
                        "The fleet service refused a token minted \(Int(age)) s ago (\(rejection)) for \(Self.call(request)); a new token from the same backend would carry the same permissions, so the call was not repeated. Fix what the fleet service names (claim key, IDs, project, audience) in the backend's minting.\(Self.clockNote(token))",
                    scope: scope, status: response.status, tokenFingerprint: token.fingerprint,
                    underlyingError: rejection)
            }
            attempts = 2
            token = try await usableToken()
            response = try await send(request, with: token)
            if response.status == 401 || response.status == 403 {
                let rejection = Self.rejection(response, token)
                authorization.invalidate(token.value, for: context, rejection: rejection)
                throw FleetServiceError(
                    fault: .token,
                    message:
                        "The fleet service refused a freshly fetched token too (\(rejection)) for \(Self.call(request)); a refetch cannot fix this: check that the backend mints tokens for this provider, audience and \(scope.kind).\(Self.clockNote(token))",
                    scope: scope, status: response.status, tokenFingerprint: token.fingerprint,
                    underlyingError: rejection)
            }
        }
        guard (200...299).contains(response.status) else {
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
        return Delivery(response: response, tokenFingerprint: token.fingerprint, attempts: attempts)
    }

    /// How long ago the token was minted, by its lifetime less the life it has left on the
    /// monotonic clock; `nil` without a monotonic expiry.
    private func mintedAge(of token: AuthToken) -> TimeInterval? {
        guard token.expiresAtUptime != nil, token.lifetime > 0 else { return nil }
        return max(0, token.lifetime - token.remainingLife(wallNow: clock.now()))
    }

    /// A closing sentence when the token's backend's clock disagreed with the device's.
    private static func clockNote(_ token: AuthToken) -> String {
        token.clockDisagreement().map { " " + $0 } ?? ""
    }

    /// `PUT /v1/providers/p/vehicles/v-42`: the method and path, never query values.
    private static func call(_ request: TransportRequest) -> String {
        "\(request.method) \(request.url.path)"
    }

    /// A token that has not expired by what the caller can tell; an expired one is
    /// invalidated and replaced once.
    private func usableToken() async throws(FleetServiceError) -> AuthToken {
        var token = try await fetch()
        if isExpired(token) {
            authorization.invalidate(token.value, for: context)
            token = try await fetch()
            if isExpired(token) {
                throw FleetServiceError(
                    fault: .token,
                    message:
                        "The provider returned an expired token twice; nothing was sent. Check the provider's cache and the backend's clock.",
                    scope: scope, tokenFingerprint: token.fingerprint,
                    underlyingError: FleetAuthError(
                        code: .tokenExpired, message: "The token has expired.", scope: scope))
            }
        }
        return token
    }

    /// How long a provider other than FleetAuth's own may take to answer before the call
    /// fails (FleetAuth's provider bounds its own fetches by its retry deadline).
    static var providerDeadline: TimeInterval { 60 }

    private func fetch() async throws(FleetServiceError) -> AuthToken {
        let answer: AuthToken?
        do {
            if authorization is TokenProvider<Context> {
                answer = try await authorization.token(for: context)
            } else {
                let (authorization, context) = (self.authorization, self.context)
                answer = try await clock.withTimeout(Self.providerDeadline) {
                    try await authorization.token(for: context)
                }
            }
        } catch let error as FleetAuthError where error.code == .rejectedTokenReissued {
            throw FleetServiceError(fault: .token, message: error.message, scope: scope, underlyingError: error)
        } catch {
            throw FleetServiceError(
                fault: .token,
                message: "No token could be fetched for \(scope): \(TransportFailureReason.describe(error))",
                scope: scope,
                underlyingError: error)
        }
        guard let answer else {
            throw FleetServiceError(
                fault: .token,
                message:
                    "The token provider did not answer within \(Int(Self.providerDeadline)) s, so nothing was sent; a provider must call its completion exactly once, with a token or an error.",
                scope: scope)
        }
        return answer
    }

    /// Expired by the token's monotonic expiry on the clock of the provider that fetched it
    /// (no change of the device's time moves that, and the caller's clock does not
    /// matter), else by its wall expiry (unknown expiries never are).
    private func isExpired(_ token: AuthToken) -> Bool {
        token.remainingLife(wallNow: clock.now()) <= 0
    }

    private func send(_ request: TransportRequest, with token: AuthToken) async throws(FleetServiceError)
        -> TransportResponse
    {
        var request = request
        request.headers["Authorization"] = "Bearer \(token.value)"
        do {
            return try await transport.send(request)
        } catch {
            throw FleetServiceError(
                fault: .network,
                message:
                    "\(Self.call(request)) to the fleet service got no answer (\(TransportFailureReason.describe(error))). Check connectivity and the fleet service URL; the call can be retried.",
                scope: scope, tokenFingerprint: token.fingerprint, underlyingError: error)
        }
    }

    /// What the fleet service said about `token` in its 401 or 403.
    private static func rejection(_ response: TransportResponse, _ token: AuthToken) -> TokenRejection {
        TokenRejection(status: response.status, body: response.body, token: token.value)
    }

}
