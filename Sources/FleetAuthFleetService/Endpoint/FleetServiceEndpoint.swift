import FleetAuthCore
public import Foundation

/// Where the fleet service lives and which provider (the operator's cloud project) the
/// calls are for. Builds the REST URLs of vehicles and trips.
public struct FleetServiceEndpoint: Sendable {
    /// The service's base URL, such as `https://fleet.example.com`.
    public var baseURL: URL
    /// The operator's provider (cloud project) ID.
    public var providerID: String
    /// Seconds one call may take.
    public var timeout: TimeInterval
    /// Allows plain `http` to hosts other than loopback.
    public var allowsInsecureHTTP: Bool

    /// Creates an endpoint.
    public init(baseURL: URL, providerID: String, timeout: TimeInterval = 15, allowsInsecureHTTP: Bool = false) {
        self.baseURL = baseURL
        self.providerID = providerID
        self.timeout = timeout
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// `{base}/v1/providers/{providerID}/vehicles/{vehicleID}`, IDs percent-encoded.
    public func vehicleURL(_ vehicleID: String, query: String? = nil) throws(FleetServiceError) -> URL {
        try url(["vehicles", vehicleID], query: query, scope: .vehicle(vehicleID))
    }

    /// `{base}/v1/providers/{providerID}/trips/{tripID}`, IDs percent-encoded.
    public func tripURL(_ tripID: String) throws(FleetServiceError) -> URL {
        try url(["trips", tripID], query: nil, scope: .trip(tripID))
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
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#;")
        let segments = ["v1", "providers", providerID] + tail
        let encoded = segments.map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }
        let basePath =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = basePath + "/" + encoded.joined(separator: "/")
        components.percentEncodedQuery = query
        guard let url = components.url else { throw refuse("The fleet service URL could not be built.") }
        return url
    }
}
