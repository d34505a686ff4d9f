import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation

/// Vehicles looking up their tokens every `interval` seconds on a manual clock while the
/// token backend is down (503, or refused connections) for part of the run.
///
/// Times are seconds from the start, when every vehicle fetches its first token. Lookups
/// between `watchFrom` and the outage are skipped: a fresh token is served from the cache
/// with no request and no state written (the cache records lookups only inside a token's
/// refresh window), so skipping them changes nothing but the run time. Between lookups
/// the clock moves from one sleeper's deadline to the next and lets the woken tasks run,
/// so background retries happen at their own moments, not at the next lookup. A cold start
/// with any failed lookup ends the run there.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
struct OutageSimulation {
    /// What the run saw.
    struct Outcome {
        /// Lookups that got a token.
        var served = 0
        /// Lookups that got an error, with the life the cached token had left (or `nil`).
        var failures: [(time: TimeInterval, cachedLife: TimeInterval?, error: any Error)] = []
        /// Uptimes of the requests the backend received (from the start).
        var requestTimes: [TimeInterval] = []
        /// The least life a served token had left.
        var shortestLifeServed = TimeInterval.infinity
        /// The engine's counters at the end.
        var statistics: TokenStatistics
    }

    var vehicles = 1
    var interval: TimeInterval = 5
    var latency: TimeInterval = 0.2
    /// A fleet minted together and kept in step (the spread has its own tests), so that
    /// outages can start at its refresh moment to the second.
    var refresh = RefreshPolicy(spreadsRefreshes: false)
    var retry = RetryPolicy()
    /// Where lookups start being simulated even without an outage (the refresh window).
    var watchFrom: TimeInterval = 2900
    var refusesConnections = false

    /// Runs until `end` with the backend down during `outage`.
    func run(outage: Range<TimeInterval>, until end: TimeInterval) async throws -> Outcome {
        let clock = ManualWallClock()
        let origin = clock.uptime()
        let backend = InMemoryTokenBackend(clock: clock)
        let transport = InMemoryTransport(clock: clock, latency: latency)
        transport.mount(backend, at: "/token")
        let requestTimes = LockedState<[TimeInterval]>([])
        let refuses = refusesConnections
        transport.setFaultInjector { _, _ in
            let time = clock.uptime() - origin
            requestTimes.withLock { $0.append(time) }
            guard outage.contains(time) else { return nil }
            return refuses ? .connectionFailure : .status(503)
        }
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
                refresh: refresh, retry: retry))
        let scopes = (0..<vehicles).map { AuthorizationScope.vehicle("v-\($0)") }
        var outcome = Outcome(statistics: engine.statistics)
        var time: TimeInterval = 0
        while time < end {
            if time >= watchFrom || outage.contains(time) || time == 0 {
                await clock.advanceSettled(to: origin + time)
                for scope in scopes {
                    let cachedLife = engine.cachedToken(for: scope).map { $0.expiresAt.timeIntervalSince(clock.now()) }
                    let result: Result<AuthToken, any Error>
                    if let token = engine.cachedUsableToken(for: scope) {
                        result = .success(token)
                    } else {
                        result = await clock.runToCompletion(horizon: 10) { try await engine.token(for: scope) }
                    }
                    switch result {
                    case .success(let token):
                        outcome.served += 1
                        outcome.shortestLifeServed = min(
                            outcome.shortestLifeServed, token.expiresAt.timeIntervalSince(clock.now()))
                    case .failure(let error):
                        outcome.failures.append((time, cachedLife, error))
                    }
                }
                // A fleet that cannot get its first tokens has failed its test already;
                // hours more of lookups that each ask the backend would only take minutes.
                if time == 0, !outcome.failures.isEmpty { break }
            }
            time += interval
        }
        outcome.requestTimes = requestTimes.withLock { $0 }
        outcome.statistics = engine.statistics
        engine.invalidateAll()
        return outcome
    }
}

extension Array where Element == TimeInterval {
    /// The most entries in any one-second window starting at an entry.
    var peakPerSecond: Int {
        let sorted = self.sorted()
        var peak = 0
        var start = 0
        for end in sorted.indices {
            while sorted[end] - sorted[start] >= 1 { start += 1 }
            peak = Swift.max(peak, end - start + 1)
        }
        return peak
    }
}
