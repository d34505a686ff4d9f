public import FleetAuthCore
public import Foundation

/// Where the fleet service lives, which provider (the operator's cloud project) the calls
/// are for, and which flavor of fleet it runs. Builds the REST URLs of vehicles and trips.
public struct FleetServiceEndpoint: Sendable {
    /// The platform's two flavors: on-demand rides and scheduled deliveries. New flavors may
    /// be added without breaking anyone.
    public struct Fleet: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable { case onDemand = "on-demand", delivery }
        private let value: Value

        /// On-demand trips: vehicles are updated with `PUT …/vehicles/{id}`.
        public static let onDemand = Fleet(value: .onDemand)
        /// Scheduled deliveries: vehicles are updated with `PATCH …/deliveryVehicles/{id}`.
        public static let delivery = Fleet(value: .delivery)

        /// The flavor named `name` (`on-demand` or `delivery`), or `nil`.
        public init?(named name: String) {
            guard let value = Value(rawValue: name) else { return nil }
            self.value = value
        }

        private init(value: Value) { self.value = value }

        /// The REST collection of this flavor's vehicles.
        public var vehicleCollection: String { value == .delivery ? "deliveryVehicles" : "vehicles" }
        /// The method that updates a vehicle's location.
        public var vehicleUpdateMethod: TransportRequest.Method { value == .delivery ? .patch : .put }
        /// The `authorization` claim key that names this flavor's vehicles.
        public var vehicleClaimKey: String { value == .delivery ? "deliveryvehicleid" : "vehicleid" }

        /// `on-demand` or `delivery`.
        public var description: String { value.rawValue }
    }

    /// The service's base URL, such as `https://fleet.example.com`.
    public var baseURL: URL
    /// The operator's provider (cloud project) ID.
    public var providerID: String
    /// The flavor of fleet: on-demand (the default) or delivery.
    public var fleet: Fleet
    /// Seconds one call may take.
    public var timeout: TimeInterval
    /// Allows plain `http` to hosts other than loopback.
    public var allowsInsecureHTTP: Bool

    /// Creates an endpoint.
    public init(
        baseURL: URL, providerID: String, fleet: Fleet = .onDemand, timeout: TimeInterval = 15,
        allowsInsecureHTTP: Bool = false
    ) {
        self.baseURL = baseURL
        self.providerID = providerID
        self.fleet = fleet
        self.timeout = timeout
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// `{base}/v1/providers/{providerID}/vehicles/{vehicleID}`, or `…/deliveryVehicles/…`
    /// for a delivery fleet; IDs percent-encoded.
    public func vehicleURL(_ vehicleID: String, query: String? = nil) throws(FleetServiceError) -> URL {
        try url([fleet.vehicleCollection, vehicleID], query: query, scope: .vehicle(vehicleID))
    }

    /// `{base}/v1/providers/{providerID}/trips/{tripID}`, IDs percent-encoded.
    public func tripURL(_ tripID: String) throws(FleetServiceError) -> URL {
        try url(["trips", tripID], query: nil, scope: .trip(tripID))
    }

    /// `{base}/v1/providers/{providerID}/taskTrackingInfo/{trackingID}`: a delivery fleet's
    /// shipment as its consumer sees it; IDs percent-encoded.
    public func trackingURL(_ trackingID: String) throws(FleetServiceError) -> URL {
        try url(["taskTrackingInfo", trackingID], query: nil, scope: .tracking(trackingID))
    }

    private func url(_ tail: [String], query: String?, scope: AuthorizationScope) throws(FleetServiceError) -> URL {
        func refuse(_ message: String) -> FleetServiceError {
            FleetServiceError(fault: .caller, message: message, scope: scope)
        }
        do {
            _ = try scope.validated()
            _ = try AuthorizationScope(kind: scope.kind, id: providerID).validated()
        } catch {
            throw refuse("The provider ID or \(scope.kind) ID is empty or malformed: \(error.message)")
        }
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), let host = components.host
        else { throw refuse("The fleet service URL is not an absolute http(s) URL.") }
        guard scheme == "https" || (scheme == "http" && (allowsInsecureHTTP || TokenEndpoint.isLoopback(host))) else {
            throw refuse(
                "The fleet service URL must use https (plain http only to loopback or with allowsInsecureHTTP).")
        }
        let segments = ["v1", "providers", providerID] + tail
        let encoded = segments.map(URLTemplate.pathEncoded)
        let basePath =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = basePath + "/" + encoded.joined(separator: "/")
        components.percentEncodedQuery = query
        guard let url = components.url else { throw refuse("The fleet service URL could not be built.") }
        return url
    }
}
