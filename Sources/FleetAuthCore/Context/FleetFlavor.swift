/// The platform's two fleet flavors: on-demand rides and scheduled deliveries. Tokens name
/// their vehicle under a different `authorization` claim key in each, and the fleet service
/// refuses a token minted for the other flavor. New flavors may be added without breaking
/// anyone.
public struct FleetFlavor: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable { case onDemand = "on-demand", delivery }
    private let value: Value

    /// On-demand trips: vehicles are named by `vehicleid`.
    public static let onDemand = FleetFlavor(value: .onDemand)
    /// Scheduled deliveries: vehicles are named by `deliveryvehicleid`.
    public static let delivery = FleetFlavor(value: .delivery)

    /// The flavor named `name` (`on-demand` or `delivery`), or `nil`.
    package init?(named name: String) {
        guard let value = Value(rawValue: name) else { return nil }
        self.value = value
    }

    private init(value: Value) { self.value = value }

    /// The `authorization` claim key that names this flavor's vehicles.
    package var vehicleClaimKey: String { value == .delivery ? "deliveryvehicleid" : "vehicleid" }

    /// The other flavor.
    package var other: FleetFlavor { value == .delivery ? .onDemand : .delivery }

    /// `on-demand` or `delivery`.
    public var description: String { value.rawValue }
}
