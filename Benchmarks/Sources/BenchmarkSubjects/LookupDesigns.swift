public import FleetAuthCore
public import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// The lookups compared, each set up with one cached token for `vehicle-42`: the peers of
/// ``Peers`` and FleetAuth's three entry points; and FleetAuth's async entry point over 1,
/// 1,000 and 100,000 scopes in turn, on a clock that stands still (so that no token ages
/// into its refresh window while a slow set-up fetches them). Used for timings and
/// instruction counts; one more, ``report``, counts an update's instructions.
public enum LookupDesign: String, CaseIterable, Sendable {
    case floor, snapshot, actor
    case fleetAuthSync = "fleetauth-sync"
    case fleetAuthAsync = "fleetauth-async"
    case fleetAuthMainActor = "fleetauth-main-actor"
    /// One scope on the standing clock: what the scope counts below compare with.
    case fleetAuthOne = "fleetauth-1"
    case fleetAuthMany = "fleetauth-many"
    /// 100,000 scopes in turn: for instruction counts only (its set-up fetches 100,000 tokens).
    case fleetAuthHundredThousand = "fleetauth-100k"
    /// A vehicle's update, not a lookup: `VehicleReporter.report(_:)` through the in-memory
    /// transport, token backend and fleet service with no latency, the work of an update in
    /// the Fleet simulators article's loop that is not the clock's. For instruction counts only.
    case report

    /// The designs the timed lookup benchmark runs.
    public static var timed: [LookupDesign] {
        allCases.filter(\.isLookup).filter { $0 != .fleetAuthHundredThousand && $0 != .fleetAuthOne }
    }

    /// Whether the design looks a token up (all but ``report``).
    package var isLookup: Bool { self != .report }

    /// How the table names it.
    public var title: String {
        switch self {
        case .floor: "correct floor: Mutex + [String: Entry] + boot-time clock"
        case .snapshot: "atomic snapshot of an immutable table + clock"
        case .actor: "actor cache + clock"
        case .fleetAuthSync: "FleetAuth cachedUsableToken(for:)"
        case .fleetAuthAsync: "FleetAuth fetchToken(with:) (async)"
        case .fleetAuthMainActor: "FleetAuth fetchToken(with:) from @MainActor"
        case .fleetAuthOne: "FleetAuth fetchToken(with:), 1 scope, clock standing"
        case .fleetAuthMany: "FleetAuth fetchToken(with:), 1,000 scopes in turn, clock standing"
        case .fleetAuthHundredThousand: "FleetAuth fetchToken(with:), 100,000 scopes in turn, clock standing"
        case .report: "an update: VehicleReporter.report(_:) through the in-memory doubles, no latency"
        }
    }

    /// Ready-made lookups of every design, sharing one provider.
    public struct Subjects: Sendable {
        /// FleetAuth's provider, with the token cached.
        public let provider: DriverTokenProvider
        /// The context every FleetAuth lookup asks for.
        public let context = DriverAuthorizationContext(vehicleID: "vehicle-42")
        /// The correct floor, holding the same token.
        public let floor: Peers.Floor
        /// The atomic snapshot, holding the same token.
        public let snapshot: Peers.Snapshot
        /// The actor cache, holding the same token.
        public let actor: Peers.ActorCache

        /// Fetches the token and fills every peer with it.
        public static func make() async throws -> Subjects {
            // The provider's default clock is the system's, as in an app.
            let provider = try DriverTokenProvider(
                endpoint: BenchTransport.endpoint,
                transport: BenchTransport(clock: BenchTransport.systemClock, latency: 0))
            let token = try await provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "vehicle-42"))
            // The same token, with the same life left, in every peer; a few neighbours so that
            // the table is not a single entry.
            var entries: [String: Peers.Entry] = [:]
            for index in 0..<8 {
                entries["vehicle-\(index + 40)"] = Peers.Entry(token: token, expiresAt: Peers.bootTime() + 3600)
            }
            return Subjects(
                provider: provider, floor: Peers.Floor(entries), snapshot: Peers.Snapshot(entries),
                actor: Peers.ActorCache(entries))
        }
    }

    /// Runs `iterations` lookups; returns a checksum so that the work cannot be dropped.
    public func run(_ subjects: Subjects, iterations: Int) async throws -> Int {
        var sum = 0
        let key = "vehicle-42"
        switch self {
        case .floor:
            for _ in 0..<iterations { sum &+= subjects.floor.token(for: key)?.utf8.count ?? 0 }
        case .snapshot:
            for _ in 0..<iterations { sum &+= subjects.snapshot.token(for: key)?.utf8.count ?? 0 }
        case .actor:
            for _ in 0..<iterations { sum &+= await subjects.actor.token(for: key)?.utf8.count ?? 0 }
        case .fleetAuthSync:
            for _ in 0..<iterations {
                sum &+= subjects.provider.cachedUsableToken(for: subjects.context)?.value.utf8.count ?? 0
            }
        case .fleetAuthAsync:
            for _ in 0..<iterations {
                sum &+= try await subjects.provider.fetchToken(with: subjects.context).utf8.count
            }
        case .fleetAuthMainActor:
            sum = try await Self.runOnMainActor(subjects, iterations: iterations)
        case .report:
            sum = try await Self.runReports(iterations: iterations)
        case .fleetAuthOne, .fleetAuthMany, .fleetAuthHundredThousand:
            // Fetched here, for this design alone: the two runs' difference drops the set-up.
            let count = self == .fleetAuthOne ? 1 : self == .fleetAuthMany ? 1000 : 100_000
            let clock = StandingClock()
            let provider = try DriverTokenProvider(
                endpoint: BenchTransport.endpoint, transport: BenchTransport(clock: clock, latency: 0), clock: clock)
            let contexts = (0..<count).map { DriverAuthorizationContext(vehicleID: "vehicle-\($0)") }
            for context in contexts { sum &+= try await provider.fetchToken(with: context).utf8.count }
            var next = 0
            for _ in 0..<iterations {
                sum &+= try await provider.fetchToken(with: contexts[next]).utf8.count
                next = next == contexts.count - 1 ? 0 : next + 1
            }
        }
        return sum
    }

    /// `iterations` updates of one vehicle, after the one that fetches its token.
    private static func runReports(iterations: Int) async throws -> Int {
        let world = try InMemoryFleet(latency: 0)
        let reporter = try world.reporter("vehicle-42")
        let location = VehicleLocation(
            latitude: 52.52, longitude: 13.40, heading: 90, speed: 11.5, accuracy: 4, timestamp: world.clock.now())
        var sum = try await reporter.report(location).status
        for _ in 0..<iterations { sum &+= try await reporter.report(location).status }
        return sum
    }

    @MainActor
    private static func runOnMainActor(_ subjects: Subjects, iterations: Int) async throws -> Int {
        var sum = 0
        for _ in 0..<iterations { sum &+= try await subjects.provider.fetchToken(with: subjects.context).utf8.count }
        return sum
    }
}
