package import FleetAuthCore
import Foundation

/// Sends one fleet-service request with a bearer token, the way both the vehicle reporter
/// and the trip monitor need it:
/// - the token is fetched at call time through the app's provider;
/// - a token known to have expired is never sent: it is invalidated and replaced once;
/// - on 401 or 403 exactly that token is invalidated and the request is sent once more
///   with a fresh token;
/// - failures become ``FleetServiceError`` values naming the fault.
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

    /// Sends `request` with a bearer token and returns the 2xx response.
    package func send(_ request: TransportRequest) async throws(FleetServiceError) -> Delivery {
        var token = try await usableToken()
        var response = try await send(request, with: token)
        var attempts = 1
        if response.status == 401 || response.status == 403 {
            attempts = 2
            authorization.invalidate(token.value, for: context, rejection: Self.rejection(response, token))
            token = try await usableToken()
            response = try await send(request, with: token)
            if response.status == 401 || response.status == 403 {
                let rejection = Self.rejection(response, token)
                authorization.invalidate(token.value, for: context, rejection: rejection)
                throw FleetServiceError(
                    fault: .token,
                    message:
                        "The fleet service refused a freshly fetched token too (\(rejection)); check that the backend mints tokens for this provider, audience and \(scope.kind).",
                    scope: scope, status: response.status, tokenFingerprint: token.fingerprint,
                    underlyingError: rejection)
            }
        }
        guard (200...299).contains(response.status) else {
            throw FleetServiceError(
                fault: .service,
                message:
                    "The fleet service answered HTTP \(response.status)\((500...599).contains(response.status) ? "; try again later" : "; check the request").",
                scope: scope, status: response.status, tokenFingerprint: token.fingerprint)
        }
        return Delivery(response: response, tokenFingerprint: token.fingerprint, attempts: attempts)
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

    private func fetch() async throws(FleetServiceError) -> AuthToken {
        do {
            return try await authorization.token(for: context)
        } catch {
            throw FleetServiceError(
                fault: .token, message: "No token could be fetched for \(scope): \(Self.summary(of: error))",
                scope: scope,
                underlyingError: error)
        }
    }

    /// Expired by the token's monotonic expiry when FleetAuth fetched it (no change of the
    /// device's time moves that), else by its wall expiry (unknown expiries never are).
    private func isExpired(_ token: AuthToken) -> Bool {
        if let expiresAtUptime = token.expiresAtUptime { return expiresAtUptime <= clock.uptime() }
        return token.expiresAt <= clock.now()
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
                    "The request to the fleet service got no answer: \(Self.summary(of: error)). Check connectivity; the update can be retried.",
                scope: scope, tokenFingerprint: token.fingerprint, underlyingError: error)
        }
    }

    /// What the fleet service said about `token` in its 401 or 403.
    private static func rejection(_ response: TransportResponse, _ token: AuthToken) -> TokenRejection {
        TokenRejection(status: response.status, body: response.body, token: token.value)
    }

    private static func summary(of error: any Error) -> String {
        if let error = error as? FleetAuthError { return error.message }
        if error is CancellationError { return "cancelled" }
        return String(describing: type(of: error))
    }
}
