import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation

/// Vehicles looking up their tokens every `interval` seconds on a manual clock while the
/// token backend is down (503, or refused connections) for part of the run.
///
/// Each vehicle is a task of its own on the clock, as in an app: it looks its token up at
/// each of its moments, waits for the answer if it must, and looks up again at its next
/// moment still ahead; a vehicle that waits does not hold the others back. Times are seconds
/// on the clock from the start, when every vehicle fetches its first token, and requests and
/// lookups are recorded on that one axis. Lookups between `watchFrom` and the outage are
/// skipped: a fresh token is served from the cache with no request and no state written
/// (the cache records lookups only inside a token's refresh window), so skipping them
/// changes nothing but the run time. The clock moves from one sleeper's deadline to the next
/// and lets the woken tasks run, so background retries happen at their own moments. A cold
/// start with any failed lookup ends every vehicle's lookups there.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
struct OutageSimulation {
    /// What the run saw.
    struct Outcome: Sendable {
        /// Lookups that got a token.
        var served = 0
        /// Lookups that got an error, with the life the cached token had left (or `nil`).
        var failures: [(time: TimeInterval, cachedLife: TimeInterval?, error: any Error)] = []
        /// Uptimes of the requests the backend received (from the start).
        var requestTimes: [TimeInterval] = []
        /// The least life a served token had left.
        var shortestLifeServed = TimeInterval.infinity
        /// The longest a lookup began after its moment: a vehicle whose previous lookup
        /// waited past that moment skips it.
        var latestLookup: TimeInterval = 0
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
        let originDate = clock.now()
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
        let interval = self.interval
        let moments = stride(from: 0, to: end, by: interval).filter {
            $0 == 0 || $0 >= watchFrom || outage.contains($0)
        }
        let outcome = LockedState(Outcome(statistics: engine.statistics))
        let coldStartFailed = LockedState(false)
        let fleet = (0..<vehicles).map { index in
            clock.startSimulated {
                let scope = AuthorizationScope.vehicle("v-\(index)")
                for moment in moments {
                    let lateBy = clock.uptime() - (origin + moment)
                    // Its previous lookup waited past this moment and the next: it skips this one.
                    if lateBy >= interval { continue }
                    if lateBy < 0 { try await clock.sleep(for: -lateBy) }
                    if coldStartFailed.withLock({ $0 }) { return }
                    let time = clock.uptime() - origin
                    let cachedLife = engine.cachedToken(for: scope).map { $0.expiresAt.timeIntervalSince(clock.now()) }
                    do {
                        let token = try await engine.token(for: scope)
                        let life = token.expiresAt.timeIntervalSince(clock.now())
                        outcome.withLock { outcome in
                            outcome.served += 1
                            outcome.shortestLifeServed = min(outcome.shortestLifeServed, life)
                            outcome.latestLookup = max(outcome.latestLookup, time - moment)
                        }
                    } catch {
                        outcome.withLock { $0.failures.append((time, cachedLife, error)) }
                        // A fleet that cannot get its first tokens has failed its test already;
                        // hours more of lookups that each ask the backend would only take minutes.
                        if moment == 0 { coldStartFailed.withLock { $0 = true } }
                    }
                }
            }
        }
        await clock.run(until: originDate.addingTimeInterval(end))
        // A lookup still waiting at the end gets its answer; nothing more is looked up.
        _ = await clock.runToCompletion(horizon: 3600) {
            for vehicle in fleet { _ = try? await vehicle.value }
        }
        var result = outcome.withLock { $0 }
        result.failures.sort { $0.time < $1.time }
        result.requestTimes = requestTimes.withLock { $0 }
        result.statistics = engine.statistics
        engine.invalidateAll()
        return result
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
