/// A context a token can be asked for: the driver module's vehicle context and the
/// consumer module's trip context conform.
///
/// A context only has to say which ``AuthorizationScope`` it stands for:
///
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
}
