/// What a driver app asks a token for: a vehicle, and for delivery fleets one of its
/// tasks. The driver SDK fills it in at each location update.
public struct DriverAuthorizationContext: AuthorizationContext, CustomStringConvertible {
    /// The vehicle the update is for.
    public var vehicleID: String
    /// The delivery task, if the update concerns one.
    public var taskID: String?

    /// Creates a context.
    public init(vehicleID: String, taskID: String? = nil) {
        self.vehicleID = vehicleID
        self.taskID = taskID
    }

    /// Every vehicle context's scope is a vehicle.
    public static var scopeKinds: [AuthorizationScope.Kind] { [.vehicle] }

    /// The engine's key for this context.
    public var scope: AuthorizationScope { .vehicle(vehicleID, taskID: taskID) }

    /// `vehicle v-42`.
    public var description: String { scope.description }
}
