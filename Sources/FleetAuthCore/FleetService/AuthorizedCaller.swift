package import Foundation

/// Sends one fleet-service request with a bearer token, the way both the vehicle reporter
/// and the trip monitor need it:
/// - the token is fetched at call time through the app's provider;
/// - a token known to have expired is never sent: it is invalidated and replaced once;
/// - on 401 or 403 exactly that token is invalidated and the request is sent once more
///   with a fresh token;
/// - failures become ``FleetServiceError`` values naming the fault.
package struct AuthorizedCaller: Sendable {
    /// A token, with the device-clock expiry when the provider knows it.
    package struct IssuedToken: Sendable {
        package let value: String
        package let expiresAt: Date?

        package init(value: String, expiresAt: Date?) {
            self.value = value
            self.expiresAt = expiresAt
        }
    }

    /// An accepted call: the 2xx response, the token that carried it, and whether a
    /// rejected token made it take a second request.
    package struct Delivery: Sendable {
        package let response: TransportResponse
        package let tokenFingerprint: String
        package let attempts: Int
    }

    package let scope: AuthorizationScope
    package let transport: any HTTPTransport
    package let clock: any WallClock
    package let fetchToken: @Sendable () async throws -> IssuedToken
    package let invalidate: @Sendable (String) -> Void

    package init(
        scope: AuthorizationScope, transport: any HTTPTransport, clock: any WallClock,
        fetchToken: @escaping @Sendable () async throws -> IssuedToken,
        invalidate: @escaping @Sendable (String) -> Void
    ) {
        self.scope = scope
        self.transport = transport
        self.clock = clock
        self.fetchToken = fetchToken
        self.invalidate = invalidate
    }

    /// Creates a caller for `context` that fetches tokens through `authorization`; when it
    /// is FleetAuth's own ``TokenProvider``, its skew-corrected expiry is used.
    package init<Context: AuthorizationContext>(
        context: Context, authorization: any Sendable, transport: any HTTPTransport, clock: any WallClock,
        fetchToken: @escaping @Sendable () async throws -> String, invalidate: @escaping @Sendable (String) -> Void
    ) {
        self.init(
            scope: context.scope, transport: transport, clock: clock,
            fetchToken: {
                if let provider = authorization as? TokenProvider<Context> {
                    let token = try await provider.token(for: context)
                    return IssuedToken(value: token.value, expiresAt: token.expiresAt)
                }
                return IssuedToken(value: try await fetchToken(), expiresAt: nil)
            },
            invalidate: invalidate)
    }

    /// Sends `request` with a bearer token and returns the 2xx response.
    package func send(_ request: TransportRequest) async throws(FleetServiceError) -> Delivery {
        var token = try await usableToken()
        var response = try await send(request, with: token)
        var attempts = 1
        if response.status == 401 || response.status == 403 {
            attempts = 2
            invalidate(token.value)
            token = try await usableToken()
            response = try await send(request, with: token)
            if response.status == 401 || response.status == 403 {
                invalidate(token.value)
                throw FleetServiceError(
                    fault: .token,
                    message:
                        "The fleet service refused a freshly fetched token too (HTTP \(response.status)); check that the backend mints tokens for this provider, audience and \(scope.kind).",
                    scope: scope, status: response.status, tokenFingerprint: AuthToken.fingerprint(of: token.value))
            }
        }
        guard (200...299).contains(response.status) else {
            throw FleetServiceError(
                fault: .service,
                message:
                    "The fleet service answered HTTP \(response.status)\((500...599).contains(response.status) ? "; try again later" : "; check the request").",
                scope: scope, status: response.status, tokenFingerprint: AuthToken.fingerprint(of: token.value))
        }
        return Delivery(
            response: response, tokenFingerprint: AuthToken.fingerprint(of: token.value), attempts: attempts)
    }

    /// A token that has not expired by what the caller can tell; an expired one is
    /// invalidated and replaced once.
    private func usableToken() async throws(FleetServiceError) -> IssuedToken {
        var token = try await fetch()
        if isExpired(token) {
            invalidate(token.value)
            token = try await fetch()
            if isExpired(token) {
                throw FleetServiceError(
                    fault: .token,
                    message:
                        "The provider returned an expired token twice; nothing was sent. Check the provider's cache and the backend's clock.",
                    scope: scope, tokenFingerprint: AuthToken.fingerprint(of: token.value),
                    underlyingError: FleetAuthError(
                        code: .tokenExpired, message: "The token has expired.", scope: scope))
            }
        }
        return token
    }

    private func fetch() async throws(FleetServiceError) -> IssuedToken {
        do {
            return try await fetchToken()
        } catch {
            throw FleetServiceError(
                fault: .token, message: "No token could be fetched for \(scope): \(Self.summary(of: error))",
                scope: scope,
                underlyingError: error)
        }
    }

    /// Expired by the device-clock expiry when known, else by the JWT's `exp`.
    private func isExpired(_ token: IssuedToken) -> Bool {
        let now = clock.now()
        if let expiresAt = token.expiresAt { return expiresAt <= now }
        guard let exp = try? JWTDecoder.decode(token.value).expiresAt else { return false }
        return exp <= now
    }

    private func send(_ request: TransportRequest, with token: IssuedToken) async throws(FleetServiceError)
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
                scope: scope, tokenFingerprint: AuthToken.fingerprint(of: token.value), underlyingError: error)
        }
    }

    private static func summary(of error: any Error) -> String {
        if let error = error as? FleetAuthError { return error.message }
        if error is CancellationError { return "cancelled" }
        return String(describing: type(of: error))
    }
}
