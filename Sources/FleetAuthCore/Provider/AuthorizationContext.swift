/// A context a token can be asked for: the driver module's vehicle context and the
/// consumer module's trip context conform.
///
/// A context only has to say which ``AuthorizationScope`` it stands for:
///
/// <!-- snippet setup:
/// import FleetAuthInMemory
/// let endpoint = TokenEndpoint(url: "https://api.example.com/fleet/depot-token")
/// let transport = InMemoryTransport()
/// -->
/// ```swift
/// struct DepotContext: AuthorizationContext {
///     var vehicleID: String
///     var scope: AuthorizationScope { .vehicle(vehicleID) }
/// }
/// let provider = try TokenProvider<DepotContext>(endpoint: endpoint, transport: transport)
/// ```
public protocol AuthorizationContext: Hashable, Sendable {
    /// The engine's key for this context.
    var scope: AuthorizationScope { get }

    /// The kinds of scope this context type can stand for: lets a provider refuse a URL
    /// template none of them can fill when it is made. Default empty: unknown, and templates
    /// are checked against each request's scope instead.
    static var scopeKinds: [AuthorizationScope.Kind] { get }
}

extension AuthorizationContext {
    /// Unknown: templates are checked against each request's scope instead.
    public static var scopeKinds: [AuthorizationScope.Kind] { [] }
}
