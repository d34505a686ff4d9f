/// The ready-made ``ConsumerAuthorization``: fetches trip tokens from the operator's
/// backend, validates them, caches them per trip, and refreshes them ahead of expiry.
///
/// ```swift
/// import FleetAuthConsumer
/// import FleetAuthURLSession
///
/// let provider = try ConsumerTokenProvider(
///     endpoint: TokenEndpoint(url: "https://api.example.com/fleet/trip-token"),
///     transport: URLSessionTransport()
/// )
/// ```
public typealias ConsumerTokenProvider = TokenProvider<ConsumerAuthorizationContext>

extension TokenProvider: ConsumerAuthorization where Context == ConsumerAuthorizationContext {}
