/// A context a token can be asked for: the driver module's vehicle context and the
/// consumer module's trip context conform.
public protocol AuthorizationContext: Hashable, Sendable {
    /// The engine's key for this context.
    var scope: AuthorizationScope { get }
}
