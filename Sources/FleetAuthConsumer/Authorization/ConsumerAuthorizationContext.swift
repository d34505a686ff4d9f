/// What a consumer app asks a token for: one trip (on-demand), or one shipment's tracking ID
/// or one delivery task (delivery fleets). The consumer SDK fills it in at each refresh.
public struct ConsumerAuthorizationContext: AuthorizationContext, CustomStringConvertible {
    /// The trip being followed; empty when the context names a tracking ID or a task.
    public var tripID: String {
        didSet { scope = Self.scope(tripID, trackingID, taskID) }
    }
    /// The shipment's tracking ID, for delivery fleets.
    public var trackingID: String? {
        didSet { scope = Self.scope(tripID, trackingID, taskID) }
    }
    /// The delivery task, for delivery fleets.
    public var taskID: String? {
        didSet { scope = Self.scope(tripID, trackingID, taskID) }
    }

    /// The engine's key for this context: the tracking ID if set, else the task, else the
    /// trip. Built (its IDs normalized) when the context is made or changed, so that a
    /// lookup does not build it again.
    public private(set) var scope: AuthorizationScope

    /// Creates a context for a trip.
    public init(tripID: String) {
        self.tripID = tripID
        self.scope = .trip(tripID)
    }

    /// A context for a shipment's tracking ID. (Factories rather than initializers, so that
    /// `ConsumerAuthorizationContext.init` keeps naming the seed's trip initializer alone.)
    public static func tracking(_ trackingID: String) -> ConsumerAuthorizationContext {
        var context = ConsumerAuthorizationContext(tripID: "")
        context.trackingID = trackingID
        return context
    }

    /// A context for a delivery task.
    public static func task(_ taskID: String) -> ConsumerAuthorizationContext {
        var context = ConsumerAuthorizationContext(tripID: "")
        context.taskID = taskID
        return context
    }

    private static func scope(_ tripID: String, _ trackingID: String?, _ taskID: String?) -> AuthorizationScope {
        if let trackingID { return .tracking(trackingID) }
        if let taskID { return .task(taskID) }
        return .trip(tripID)
    }

    /// `trip t-7`, `tracking ID s-1` or `task k-3`.
    public var description: String { scope.description }
}

extension ConsumerAuthorizationContext: ScopeKindsDeclaring {
    /// Trips, shipments' tracking IDs and delivery tasks.
    package static var scopeKinds: [AuthorizationScope.Kind] { [.trip, .tracking, .task] }
}
