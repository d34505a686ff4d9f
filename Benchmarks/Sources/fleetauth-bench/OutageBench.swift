import BenchmarkSubjects
import FleetAuthCore
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// What each refresh policy costs on a good day and loses on a bad one: one vehicle
/// looking up its token every 5 s on a manual clock, 1-hour tokens, 0.2 s latency.
enum OutageBench {
    struct Row {
        let name: String
        /// 86,400 s over the measured time between two refreshes, rounded up.
        let requestsPerVehicleDay: Int
        /// The most failed lookups over outage starts second by second around the refresh.
        let failedIn5MinuteOutage: Int
        let failedIn10MinuteOutage: Int
    }

    /// Each on its refresh schedule: the spread only ever moves a first refresh earlier, and
    /// a vehicle on schedule refreshes at the moment measured here.
    static let policies: [(String, RefreshPolicy)] = [
        ("default (tolerance 5 min, floor 60 s)", RefreshPolicy(spreadsRefreshes: false)),
        ("tolerance 10 min", RefreshPolicy(outageTolerance: 600, spreadsRefreshes: false)),
        ("tolerance 2 min", RefreshPolicy(outageTolerance: 120, spreadsRefreshes: false)),
        ("strict (no degraded serving)", RefreshPolicy(servesDuringOutages: false, spreadsRefreshes: false)),
        (
            "no tolerance, strict (before)",
            RefreshPolicy(outageTolerance: 0, servesDuringOutages: false, spreadsRefreshes: false)
        ),
    ]

    static func run(quick: Bool) async throws -> [Row] {
        var rows: [Row] = []
        for (name, policy) in policies {
            let calm = try await simulate(policy, outage: 0..<0, until: 7300)
            let refreshes = calm.requestTimes.dropFirst()
            let period = refreshes.count >= 2 ? refreshes[refreshes.startIndex + 1] - refreshes.first! : 3600
            let firstRefresh = refreshes.first ?? 3600
            var worst: [TimeInterval: Int] = [:]
            for duration in [300.0, 600.0] {
                for offset in stride(from: -10.0, through: 10, by: quick ? 5 : 1) {
                    let start = firstRefresh.rounded() + offset
                    let outcome = try await simulate(
                        policy, outage: start..<(start + duration), until: start + duration + 60)
                    worst[duration] = max(worst[duration] ?? 0, outcome.failed)
                }
            }
            rows.append(
                Row(
                    name: name, requestsPerVehicleDay: Int((86_400 / period).rounded(.up)),
                    failedIn5MinuteOutage: worst[300]!, failedIn10MinuteOutage: worst[600]!))
        }
        return rows
    }

    struct Outcome {
        var failed = 0
        var requestTimes: [TimeInterval] = []
    }

    /// Lookups every 5 s; those between the first token and 2,900 s are skipped (a fresh
    /// token is served with no request and no state written).
    static func simulate(_ policy: RefreshPolicy, outage: Range<TimeInterval>, until end: TimeInterval) async throws
        -> Outcome
    {
        let clock = ManualWallClock()
        let origin = clock.uptime()
        let transport = InMemoryTransport(clock: clock, latency: 0.2)
        let backend = InMemoryTokenBackend(clock: clock)
        let times = Locked<[TimeInterval]>([])
        // The backend, answering 503 while the outage lasts.
        transport.route("/token") { request in
            let time = clock.uptime() - origin
            times.withLock { $0.append(time) }
            if outage.contains(time) { return TransportResponse(status: 503) }
            return try await backend.respond(to: request)
        }
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
            refresh: policy)
        let vehicle = DriverAuthorizationContext(vehicleID: "v-42")
        var outcome = Outcome()
        var time: TimeInterval = 0
        while time < end {
            await advance(clock, to: origin + time)
            if provider.cachedUsableToken(for: vehicle) == nil {
                let result = await clock.runToCompletion(horizon: 10) { try await provider.token(for: vehicle) }
                if case .failure = result { outcome.failed += 1 }
            }
            time = time == 0 ? 2900 : time + 5
        }
        outcome.requestTimes = times.withLock { $0 }
        provider.invalidateAll()
        return outcome
    }

    /// Moves the clock to uptime `target` one sleeper deadline at a time, letting the work
    /// each deadline wakes park again, so background retries keep their own moments.
    static func advance(_ clock: ManualWallClock, to target: TimeInterval) async {
        await clock.run(until: clock.now().addingTimeInterval(target - clock.uptime()))
    }
}
