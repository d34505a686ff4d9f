/// What a consumer app asks a token for: one trip (on-demand), or one shipment's tracking ID
/// or one delivery task (delivery fleets), exactly one of them. The consumer SDK fills it in
/// at each refresh.
public struct ConsumerAuthorizationContext: AuthorizationContext, CustomStringConvertible {
    /// What the context names. Private, so that kinds can be added without breaking a
    /// `switch`; read it through the accessors.
    private enum Subject: Hashable, Sendable {
        case trip(String), tracking(String), task(String)
    }

    private let subject: Subject

    /// The engine's key for this context, built (its IDs normalized) when the context is
    /// made, so that a lookup does not build it again.
    public let scope: AuthorizationScope

    /// Creates a context for a trip (the platform SDK's initializer).
    public init(tripID: String) {
        self.init(.trip(tripID))
    }

    private init(_ subject: Subject) {
        self.subject = subject
        switch subject {
        case .trip(let id): scope = .trip(id)
        case .tracking(let id): scope = .tracking(id)
        case .task(let id): scope = .task(id)
        }
    }

    /// A context for a trip: the same as `init(tripID:)`.
    public static func trip(_ tripID: String) -> ConsumerAuthorizationContext {
        ConsumerAuthorizationContext(.trip(tripID))
    }

    /// A context for a shipment's tracking ID (delivery fleets).
    public static func tracking(_ trackingID: String) -> ConsumerAuthorizationContext {
        ConsumerAuthorizationContext(.tracking(trackingID))
    }

    /// A context for a delivery task followed on its own (delivery fleets).
    public static func task(_ taskID: String) -> ConsumerAuthorizationContext {
        ConsumerAuthorizationContext(.task(taskID))
    }

    /// The trip, when the context names one (in Unicode NFC, as the fleet service compares IDs).
    public var tripID: String? {
        if case .trip = subject { return scope.id }
        return nil
    }

    /// The shipment's tracking ID, when the context names one (in NFC).
    public var trackingID: String? {
        if case .tracking = subject { return scope.id }
        return nil
    }

    /// The delivery task, when the context names one (in NFC).
    public var taskID: String? {
        if case .task = subject { return scope.id }
        return nil
    }

    /// `trip t-7`, `tracking ID s-1` or `task k-3`.
    public var description: String { scope.description }
}

extension ConsumerAuthorizationContext: ScopeKindsDeclaring {
    /// Trips, shipments' tracking IDs and delivery tasks.
    package static var scopeKinds: [AuthorizationScope.Kind] { [.trip, .tracking, .task] }
}
