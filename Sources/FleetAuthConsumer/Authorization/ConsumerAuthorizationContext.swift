/// What a consumer app asks a token for: one trip. The consumer SDK fills it in at each
/// trip refresh.
public struct ConsumerAuthorizationContext: AuthorizationContext, CustomStringConvertible {
    /// The trip being followed.
    public var tripID: String

    /// Creates a context.
    public init(tripID: String) {
        self.tripID = tripID
    }

    /// Every trip context's scope is a trip.
    public static var scopeKind: AuthorizationScope.Kind? { .trip }

    /// The engine's key for this context.
    public var scope: AuthorizationScope { .trip(tripID) }

    /// `trip t-7`.
    public var description: String { scope.description }
}
