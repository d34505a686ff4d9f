/// What a token is asked for: one vehicle (optionally one of its tasks) or one trip.
///
/// The driver and consumer modules turn their contexts into a scope; the engine keys
/// its cache, its in-flight fetches and its cooldowns by scope, so two scopes never
/// see each other's tokens.
public struct AuthorizationScope: Hashable, Sendable, CustomStringConvertible {
    /// Which kind of fleet object the scope names.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case vehicle, trip }
        private let value: Value

        /// A vehicle: driver apps.
        public static let vehicle = Kind(value: .vehicle)
        /// A trip: consumer apps.
        public static let trip = Kind(value: .trip)

        /// The `authorization` claim keys that may name this kind of object.
        /// Delivery fleets name vehicles `deliveryvehicleid`.
        public var claimKeys: [String] {
            switch value {
            case .vehicle: ["vehicleid", "deliveryvehicleid"]
            case .trip: ["tripid"]
            }
        }

        /// The query item name used when the ID is sent as a query item.
        public var queryItemName: String {
            switch value {
            case .vehicle: "vehicleId"
            case .trip: "tripId"
            }
        }

        /// `vehicle` or `trip`.
        public var description: String {
            switch value {
            case .vehicle: "vehicle"
            case .trip: "trip"
            }
        }
    }

    /// The kind of object.
    public let kind: Kind
    /// The vehicle or trip ID.
    public let id: String
    /// The delivery task ID, for delivery fleets; `nil` otherwise.
    public let taskID: String?

    /// Creates a scope. Use ``validated()`` before sending it anywhere.
    public init(kind: Kind, id: String, taskID: String? = nil) {
        self.kind = kind
        self.id = id
        self.taskID = taskID
    }

    /// A vehicle scope.
    public static func vehicle(_ id: String, taskID: String? = nil) -> AuthorizationScope {
        AuthorizationScope(kind: .vehicle, id: id, taskID: taskID)
    }

    /// A trip scope.
    public static func trip(_ id: String) -> AuthorizationScope {
        AuthorizationScope(kind: .trip, id: id)
    }

    /// Hashes the IDs only: scopes of different kinds with one ID are rare in one cache
    /// and stay apart by `==`, and every lookup pays for this hash.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        if let taskID { hasher.combine(taskID) }
    }

    /// `vehicle v-42`, `vehicle v-42 task t-1` or `trip t-7`. IDs are not secrets.
    public var description: String {
        if let taskID { return "\(kind) \(id) task \(taskID)" }
        return "\(kind) \(id)"
    }

    /// Checks that the IDs can be sent to a backend: not empty, no surrounding
    /// whitespace, no control characters, at most 256 characters.
    public func validated() throws(FleetAuthError) -> AuthorizationScope {
        try Self.check(id, field: "\(kind) ID", scope: self)
        if let taskID { try Self.check(taskID, field: "task ID", scope: self) }
        return self
    }

    private static func check(_ value: String, field: String, scope: AuthorizationScope) throws(FleetAuthError) {
        let problem: String? =
            if value.isEmpty { "is empty" } else if value.count > 256 {
                "is longer than 256 characters"
            } else if value.trimmingWhitespace() != value {
                "has leading or trailing whitespace"
            } else if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                "contains control characters"
            } else { nil }
        if let problem {
            throw FleetAuthError(
                code: .invalidContext,
                message: "The \(field) \(problem); pass the ID exactly as the fleet service knows it.",
                scope: scope)
        }
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    package func trimmingWhitespace() -> Substring {
        var slice = self[...]
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return slice
    }
}
