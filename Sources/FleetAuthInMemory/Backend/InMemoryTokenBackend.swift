public import FleetAuthCore
public import Foundation

/// A token backend in process: it mints JWT-shaped tokens (`header.payload.signature`,
/// base64url, fleet claims) for the vehicle or trip a request names, and answers in a
/// chosen ``/FleetAuthCore/TokenResponseFormat``.
///
/// The signature part is a fixed placeholder, not a real RS256 signature: FleetAuth never
/// verifies signatures on the client, so tests and demos need no key.
public final class InMemoryTokenBackend: Sendable {
    /// How tokens are minted and answered.
    public struct Configuration: Sendable {
        /// `exp − iat` of minted tokens. Default 3600 s.
        public var lifetime: TimeInterval
        /// The shape of the answer. Default `TokenResponseFormat.tokenOnly`.
        public var format: TokenResponseFormat
        /// How far the backend's clock is ahead of the injected clock (negative: behind).
        public var clockOffset: TimeInterval
        /// `iss` and `sub`.
        public var serviceAccount: String
        /// `aud`.
        public var audience: String
        /// `kid` in the header.
        public var keyID: String
        /// Whether tokens name `"*"` instead of the requested ID.
        public var mintsWildcard: Bool
        /// The fleet whose claim key names a vehicle: `vehicleid` (on-demand, the default) or
        /// `deliveryvehicleid` (delivery).
        public var fleet: FleetFlavor
        /// Whether answers carry a `Date` header.
        public var sendsDateHeader: Bool
        /// Edits each token's payload before it is encoded: add, change or remove claims to
        /// mint the odd tokens real backends send. `nil` leaves the payload as minted.
        public var editPayload: (@Sendable (_ scope: AuthorizationScope, _ payload: inout [String: Any]) -> Void)?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - lifetime: `exp − iat` of minted tokens. Default 3600 s.
        ///   - format: The shape of the answer. Default `TokenResponseFormat.tokenOnly`.
        ///   - clockOffset: How far the backend's clock is ahead of the injected clock (negative: behind).
        ///   - serviceAccount: `iss` and `sub`.
        ///   - audience: `aud`.
        ///   - keyID: `kid` in the header.
        ///   - mintsWildcard: Mint `"*"` instead of the requested ID.
        ///   - sendsDateHeader: Whether answers carry a `Date` header.
        ///   - fleet: The fleet whose claim key names a vehicle: `vehicleid` (on-demand, the default) or
        ///     `deliveryvehicleid` (delivery).
        ///   - editPayload: Edits each token's payload before it is encoded: add, change or remove claims to mint
        ///     the odd tokens real backends send. `nil` leaves the payload as minted.
        public init(
            lifetime: TimeInterval = 3600, format: TokenResponseFormat = .tokenOnly, clockOffset: TimeInterval = 0,
            serviceAccount: String = "fleet-token-minter@example-project.iam.gserviceaccount.com",
            audience: String = TokenRules.fleetServiceAudience, keyID: String = "in-memory-key-1",
            mintsWildcard: Bool = false, sendsDateHeader: Bool = true, fleet: FleetFlavor = .onDemand,
            editPayload: (@Sendable (_ scope: AuthorizationScope, _ payload: inout [String: Any]) -> Void)? = nil
        ) {
            self.fleet = fleet
            self.lifetime = lifetime
            self.format = format
            self.clockOffset = clockOffset
            self.serviceAccount = serviceAccount
            self.audience = audience
            self.keyID = keyID
            self.mintsWildcard = mintsWildcard
            self.sendsDateHeader = sendsDateHeader
            self.editPayload = editPayload
        }
    }

    private let clock: any WallClock
    private let state:
        LockedState<(configuration: Configuration, minted: Int, serial: Int, issued: RecentHistory<String>)>

    /// Creates a backend reading time from `clock`.
    public init(clock: any WallClock = SystemWallClock(), configuration: Configuration = Configuration()) {
        self.clock = clock
        self.state = LockedState((configuration, 0, 0, RecentHistory()))
    }

    /// The current configuration; changes apply to the next request.
    public var configuration: Configuration {
        get { state.withLock { $0.configuration } }
        set { state.withLock { $0.configuration = newValue } }
    }

    /// How many tokens the backend has minted.
    public var mintedCount: Int { state.withLock { $0.minted } }

    /// The tokens minted so far, oldest first, up to the latest 10,000 (``mintedCount``
    /// counts them all): what a test compares with the token on the wire, and the secrets a
    /// leak test must never find in output. The bound keeps a long simulation's memory
    /// from growing with simulated time.
    ///
    /// - Important: Count with ``mintedCount``: past 10,000 tokens, `issuedTokens.count`
    ///   stays at 10,000.
    public var issuedTokens: [String] { state.withLock { $0.issued.elements } }

    /// Answers a token request: 400 if it names no vehicle, trip, tracking ID or task, else
    /// 200 with a token in the configured format.
    public func respond(to request: TransportRequest) async throws -> TransportResponse {
        try await respond(to: request, pathFields: [:])
    }

    /// Answers a token request whose path named the IDs in `pathFields` (query-item names,
    /// as ``InMemoryTransport/mount(_:at:)`` reads them from a path template).
    package func respond(to request: TransportRequest, pathFields: [String: String]) async throws
        -> TransportResponse
    {
        guard let scope = Self.scope(of: request, pathFields: pathFields) else {
            return TransportResponse(
                status: 400, headers: ["Content-Type": "application/json"],
                body: Data(#"{"error":"name a vehicleId, tripId, trackingId or taskId"}"#.utf8))
        }
        let (configuration, serial) = state.withLock { state in
            state.minted += 1
            state.serial += 1
            return (state.configuration, state.serial)
        }
        let now = clock.now().addingTimeInterval(configuration.clockOffset)
        let token = mint(for: scope, issuedAt: now, configuration: configuration, serial: serial)
        state.withLock { $0.issued.append(token) }
        let expiry = now.addingTimeInterval(configuration.lifetime)
        var headers = ["Content-Type": "application/json", "Cache-Control": "no-store"]
        if configuration.sendsDateHeader { headers["Date"] = HTTPDate.format(now) }
        let body: Data
        switch configuration.format.body {
        case .plainText:
            headers["Content-Type"] = "application/jwt"
            body = Data(token.utf8)
        case .json(let tokenKey, let field):
            var members: [(key: String, value: JSONText.Value)] = [(tokenKey, .string(token))]
            if let field {
                let value: Int64 =
                    switch field.unit.value {
                    case .absoluteSeconds: Int64(expiry.timeIntervalSince1970)
                    case .absoluteMilliseconds: Int64(expiry.timeIntervalSince1970 * 1000)
                    case .secondsFromNow: Int64(configuration.lifetime)
                    }
                // One key for both is the expiry's: the object keeps a key's last member.
                members.append((field.key, .integer(value)))
            }
            body = Data(JSONText.object(members))
        }
        return TransportResponse(status: 200, headers: headers, body: body, url: request.url)
    }

    private func mint(
        for scope: AuthorizationScope, issuedAt: Date, configuration: Configuration, serial: Int
    ) -> String {
        let id = configuration.mintsWildcard ? JWTClaims.wildcard : scope.id
        let key = scope.kind == .vehicle ? configuration.fleet.vehicleClaimKey : scope.kind.claimKeys[0]
        var authorization: [(key: String, value: JSONText.Value)] = [(key, .string(id))]
        // A vehicle's claim key is never `taskid`: the two are two members.
        if let taskID = scope.taskID { authorization.append(("taskid", .string(taskID))) }
        let payload: [(key: String, value: JSONText.Value)] = [
            ("iss", .string(configuration.serviceAccount)), ("sub", .string(configuration.serviceAccount)),
            ("aud", .string(configuration.audience)), ("iat", .integer(Int64(issuedAt.timeIntervalSince1970))),
            ("exp", .integer(Int64(issuedAt.timeIntervalSince1970 + configuration.lifetime))),
            ("jti", .string("in-memory-\(serial)")), ("authorization", .object(authorization)),
        ]
        let header: [(key: String, value: JSONText.Value)] = [
            ("alg", .string("RS256")), ("typ", .string("JWT")), ("kid", .string(configuration.keyID)),
        ]
        guard let editPayload = configuration.editPayload else {
            return Self.compact(header: JSONText.object(header), payload: JSONText.object(payload))
        }
        // An edit may give the payload any shape: it is written by `JSONSerialization`.
        var edited = Self.dictionary(payload)
        editPayload(scope, &edited)
        return Self.jwt(header: Self.dictionary(header), payload: edited)
    }

    /// The members as the dictionary `JSONSerialization` writes.
    private static func dictionary(_ members: [(key: String, value: JSONText.Value)]) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        for (key, value) in members {
            dictionary[key] =
                switch value {
                case .string(let text): text
                case .integer(let number): number
                case .object(let members): Self.dictionary(members)
                }
        }
        return dictionary
    }

    /// Builds a compact JWT from JSON objects, with a placeholder signature. Tests use
    /// it to craft tokens of any shape.
    package static func jwt(header: [String: Any] = ["alg": "RS256", "typ": "JWT"], payload: [String: Any]) -> String {
        let options: JSONSerialization.WritingOptions = [.sortedKeys]
        let headerData = (try? JSONSerialization.data(withJSONObject: header, options: options)) ?? Data()
        let payloadData = (try? JSONSerialization.data(withJSONObject: payload, options: options)) ?? Data()
        return compact(header: Array(headerData), payload: Array(payloadData))
    }

    /// `header.payload.signature` in base64url, the signature a fixed placeholder.
    private static func compact(header: [UInt8], payload: [UInt8]) -> String {
        Base64URL.encode(bytes: header) + "." + Base64URL.encode(bytes: payload) + "."
            + Base64URL.encode(bytes: "in-memory-unsigned".utf8)
    }

    /// The scope a token request names: query items `vehicleId` (and `taskId`), `tripId`,
    /// `trackingId` or `taskId` alone,
    /// or the same keys in a JSON body.
    package static func scope(of request: TransportRequest, pathFields: [String: String] = [:]) -> AuthorizationScope? {
        var fields = pathFields
        if let body = request.body, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            for (key, value) in object { if let text = value as? String { fields[key] = text } }
        }
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        for item in items { if let value = item.value { fields[item.name] = value } }
        if let vehicle = fields[AuthorizationScope.Kind.vehicle.queryItemName] {
            return .vehicle(vehicle, taskID: fields["taskId"])
        }
        if let trip = fields[AuthorizationScope.Kind.trip.queryItemName] { return .trip(trip) }
        if let tracking = fields[AuthorizationScope.Kind.tracking.queryItemName] { return .tracking(tracking) }
        if let task = fields[AuthorizationScope.Kind.task.queryItemName] { return .task(task) }
        return nil
    }
}
