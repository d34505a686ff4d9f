/// The ready-made ``DriverAuthorization``: fetches vehicle tokens from the operator's
/// backend, validates them, caches them per vehicle, and refreshes them ahead of expiry.
///
/// ```swift
/// import FleetAuthDriver
/// import FleetAuthURLSession
///
/// let provider = try DriverTokenProvider(
///     endpoint: TokenEndpoint(url: "https://api.example.com/fleet/vehicle-token"),
///     transport: URLSessionTransport()
/// )
/// ```
public typealias DriverTokenProvider = TokenProvider<DriverAuthorizationContext>

extension TokenProvider: DriverAuthorization where Context == DriverAuthorizationContext {}
