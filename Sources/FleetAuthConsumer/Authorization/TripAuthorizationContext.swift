/// What the platform's consumer SDK asks a token for: one trip, whose ID is always there.
///
/// It is the context of ``TripAuthorization``, the shape of a provider ported from the
/// platform's consumer sample: `authorizationContext.tripID` is a `String`, as the platform's
/// consumer context has it. ``ConsumerAuthorizationContext`` names a trip, a tracking ID or a
/// task, so its `tripID` is optional; `ConsumerAuthorizationContext.trip(context.tripID)` is
/// the same trip for ``ConsumerTokenProvider``.
public struct TripAuthorizationContext: AuthorizationContext, CustomStringConvertible {
    /// The engine's key for this context: the trip, its ID normalized when the context is made.
    public let scope: AuthorizationScope

    /// Creates a context for a trip (the platform SDK's initializer).
    public init(tripID: String) {
        scope = .trip(tripID)
    }

    /// The trip (in Unicode NFC, as the fleet service compares IDs).
    public var tripID: String { scope.id }

    /// `trip t-7`.
    public var description: String { scope.description }
}

extension TripAuthorizationContext: ScopeKindsDeclaring {
    /// Every trip context's scope is a trip.
    package static var scopeKinds: [AuthorizationScope.Kind] { [.trip] }
}
