public import FleetAuthCore

/// A transport that authorizes every request it sends with a token for one context, by
/// the rule of ``AuthorizedCaller``: the token fetched at call time, an expired one never
/// sent, one invalidate-and-resend after a 401 or 403.
///
/// Hand it to code that takes an ``/FleetAuthCore/HTTPTransport`` and should not know about tokens. Like
/// any transport it returns the fleet service's answer whatever its status (after the one
/// resend); it throws ``FleetServiceError`` when no token can be had (`token`), when no
/// answer came (`network`), or for a URL that would send the token in clear text (`caller`).
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
/// let transport = AuthorizingTransport(
///     base: URLSessionTransport(), context: DriverAuthorizationContext(vehicleID: "v-42"),
///     authorization: provider)
/// let response = try await transport.send(TransportRequest(method: "GET", url: vehicleURL))
/// ```
public struct AuthorizingTransport<Context: AuthorizationContext>: HTTPTransport {
    /// The caller that applies the rule; its transport is the wrapped one.
    public let caller: AuthorizedCaller<Context>

    /// Wraps `base`: each request gets a token for `context` from `authorization`.
    /// `clock` is as in ``AuthorizedCaller/init(context:authorization:transport:clock:)``.
    public init<Authorization: TokenAuthorization<Context>>(
        base: any HTTPTransport, context: Context, authorization: Authorization, clock: (any WallClock)? = nil
    ) {
        caller = AuthorizedCaller(context: context, authorization: authorization, transport: base, clock: clock)
    }

    /// Sends `request` with a bearer token and returns the last answer, whatever its status.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await caller.respond(to: request)
    }
}
