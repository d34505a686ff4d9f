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
///     var scope: AuthorizationScope { AuthorizationScope(kind: .vehicle, id: vehicleID) }
/// }
/// let provider = try TokenProvider<DepotContext>(endpoint: endpoint, transport: transport)
/// ```
public protocol AuthorizationContext: Hashable, Sendable {
    /// The engine's key for this context.
    var scope: AuthorizationScope { get }
}

/// A context type that says which kinds of scope it stands for, so that a provider refuses a
/// URL template none of them fills when it is made (else each request's scope is checked).
package protocol ScopeKindsDeclaring: AuthorizationContext {
    /// The kinds of scope this context type can stand for.
    static var scopeKinds: [AuthorizationScope.Kind] { get }
}

extension AuthorizationContext {
    /// The kinds of scope this context type declares; empty when unknown.
    package static var declaredScopeKinds: [AuthorizationScope.Kind] {
        (Self.self as? any ScopeKindsDeclaring.Type)?.scopeKinds ?? []
    }
}
