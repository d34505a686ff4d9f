public import FleetAuthCore
public import Foundation

/// Where the fleet service lives, which provider (the operator's cloud project) the calls
/// are for, and which flavor of fleet it runs. Builds the REST URLs of vehicles and trips.
public struct FleetServiceEndpoint: Sendable {
    /// The service's base URL, such as `https://fleet.example.com`.
    public var baseURL: URL
    /// The operator's provider (cloud project) ID.
    public var providerID: String
    /// The flavor of fleet: on-demand (the default) or delivery.
    public var fleet: FleetFlavor
    /// Seconds one call may take.
    public var timeout: TimeInterval
    /// Allows plain `http` to hosts other than loopback.
    public var allowsInsecureHTTP: Bool

    /// Creates an endpoint.
    public init(
        baseURL: URL, providerID: String, fleet: FleetFlavor = .onDemand, timeout: TimeInterval = 15,
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
        try url(.vehicles(of: fleet), vehicleID, query: query)
    }

    /// `{base}/v1/providers/{providerID}/trips/{tripID}`, IDs percent-encoded.
    public func tripURL(_ tripID: String) throws(FleetServiceError) -> URL {
        try url(.trips, tripID, query: nil)
    }

    /// `{base}/v1/providers/{providerID}/taskTrackingInfo/{trackingID}`: a delivery fleet's
    /// shipment as its consumer sees it; IDs percent-encoded.
    public func trackingURL(_ trackingID: String) throws(FleetServiceError) -> URL {
        try url(.taskTrackingInfo, trackingID, query: nil)
    }

    /// Checks everything a call for `scope` needs before anything is sent: the scope's IDs
    /// (vehicle, trip or task), the provider ID, the base URL (absolute, https or loopback
    /// http unless ``allowsInsecureHTTP``) and the timeout. Throws a `caller` fault naming
    /// the field and the rule.
    /// Without a scope, checks the provider ID, base URL and timeout alone.
    package func validate(_ scope: AuthorizationScope? = nil) throws(FleetServiceError) {
        _ = try components(for: scope)
    }

    private func components(for scope: AuthorizationScope?) throws(FleetServiceError) -> URLComponents {
        func refuse(_ message: String) -> FleetServiceError {
            FleetServiceError(fault: .caller, message: message, scope: scope)
        }
        do {
            _ = try scope?.validated()
        } catch {
            throw refuse(error.message)
        }
        do {
            try AuthorizationScope.checkID(providerID, field: "provider ID")
        } catch {
            throw refuse(error.message.replacingOccurrences(of: "pass the ID", with: "pass the provider (project) ID"))
        }
        let notAbsolute = "The fleet service URL is not an absolute http(s) URL; write it as https://host."
        guard let components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
            throw refuse(notAbsolute)
        }
        switch TokenCarryingURL.judge(
            scheme: components.scheme, host: components.host, allowsInsecureHTTP: allowsInsecureHTTP)
        {
        case .allowed: break
        case .notAbsolute: throw refuse(notAbsolute)
        case .unsupportedScheme(let scheme): throw refuse("The fleet service URL's scheme `\(scheme)` is not https.")
        case .clearText(let host):
            throw refuse(
                "The fleet service URL uses plain http to \(host), which would send tokens in clear text; use https (plain http only to loopback or with allowsInsecureHTTP)."
            )
        }
        guard timeout > 0, timeout.isFinite else {
            throw refuse("The fleet service timeout must be a positive number of seconds.")
        }
        return components
    }

    private func url(_ route: FleetServiceRoute, _ id: String, query: String?) throws(FleetServiceError) -> URL {
        let scope = route.scope(id: id)
        var components = try components(for: scope)
        let segments = route.segments(providerID: providerID, id: id)
        let encoded = segments.map(URLTemplate.pathEncoded)
        let basePath =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = basePath + "/" + encoded.joined(separator: "/")
        components.percentEncodedQuery = query
        guard let url = components.url else {
            throw FleetServiceError(fault: .caller, message: "The fleet service URL could not be built.", scope: scope)
        }
        return url
    }
}

extension FleetFlavor {
    /// The REST collection of this flavor's vehicles: `vehicles`, or `deliveryVehicles`.
    public var vehicleCollection: String { FleetServiceRoute.vehicles(of: self).collection }
    /// The method that updates a vehicle's location: `PUT`, or `PATCH` for deliveries.
    public var vehicleUpdateMethod: String { FleetServiceRoute.vehicles(of: self).method }
}
