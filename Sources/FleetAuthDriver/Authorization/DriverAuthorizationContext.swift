/// What a driver app asks a token for: a vehicle, and for delivery fleets one of its
/// tasks. The driver SDK fills it in at each location update.
public struct DriverAuthorizationContext: AuthorizationContext, CustomStringConvertible {
    /// The vehicle the update is for.
    public var vehicleID: String {
        didSet { scope = .vehicle(vehicleID, taskID: taskID) }
    }
    /// The delivery task, if the update concerns one.
    public var taskID: String? {
        didSet { scope = .vehicle(vehicleID, taskID: taskID) }
    }

    /// The engine's key for this context, built (its IDs normalized) when the context is
    /// made or changed, so that a lookup does not build it again.
    public private(set) var scope: AuthorizationScope

    /// Creates a context.
    public init(vehicleID: String, taskID: String? = nil) {
        self.vehicleID = vehicleID
        self.taskID = taskID
        self.scope = .vehicle(vehicleID, taskID: taskID)
    }

    /// `vehicle v-42`.
    public var description: String { scope.description }
}

extension DriverAuthorizationContext: ScopeKindsDeclaring {
    /// Every vehicle context's scope is a vehicle.
    package static var scopeKinds: [AuthorizationScope.Kind] { [.vehicle] }
}
