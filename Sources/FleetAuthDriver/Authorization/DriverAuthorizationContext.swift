/// What a driver app asks a token for: a vehicle, and for delivery fleets one of its
/// tasks. The driver SDK fills it in at each location update.
public struct DriverAuthorizationContext: AuthorizationContext, CustomStringConvertible {
    /// The vehicle the update is for (in Unicode NFC, as the fleet service compares IDs).
    public var vehicleID: String {
        get { scope.id }
        set { scope = .vehicle(newValue, taskID: scope.taskID) }
    }
    /// The delivery task, if the update concerns one (in NFC, like ``vehicleID``).
    public var taskID: String? {
        get { scope.taskID }
        set { scope = .vehicle(scope.id, taskID: newValue) }
    }

    /// The engine's key for this context, built (its IDs normalized) when the context is
    /// made or changed, so that a lookup does not build it again. The context is its scope
    /// and nothing more, so passing one copies two strings.
    public private(set) var scope: AuthorizationScope

    /// Creates a context.
    public init(vehicleID: String, taskID: String? = nil) {
        scope = .vehicle(vehicleID, taskID: taskID)
    }

    /// `vehicle v-42`.
    public var description: String { scope.description }
}

extension DriverAuthorizationContext: ScopeKindsDeclaring {
    /// Every vehicle context's scope is a vehicle.
    package static var scopeKinds: [AuthorizationScope.Kind] { [.vehicle] }
}
