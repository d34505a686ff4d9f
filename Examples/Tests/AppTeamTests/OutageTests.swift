import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

/// What an app team writes against the public API alone: metrics by event kind, a token's
/// state at a moment, and a 5-minute token-backend outage scripted with a fault window.
@Suite("From outside: metrics, token state and a scripted outage on the public API", .timeLimit(.minutes(10)))
struct OutageTests {
    /// Counts events by kind, as an app's metrics would, and keeps their text, as its log would.
    // Safe to share: every access to `counts` and `lines` holds `lock`.
    final class KindCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [TokenEvent.Kind: Int] = [:]
        private var lines: [String] = []
        func record(_ event: TokenEvent) {
            lock.withLock {
                counts[event.kind, default: 0] += 1
                lines.append("\(event)")
            }
        }
        subscript(kind: TokenEvent.Kind) -> Int { lock.withLock { counts[kind] ?? 0 } }
        var text: [String] { lock.withLock { lines } }
    }

    struct Fleet {
        let clock = ManualWallClock()
        let transport: InMemoryTransport
        let backend: InMemoryTokenBackend
        let provider: DriverTokenProvider
        let counter = KindCounter()
        let vehicle = DriverAuthorizationContext(vehicleID: "v-42")

        init(backend configuration: InMemoryTokenBackend.Configuration = .init()) throws {
            transport = InMemoryTransport(clock: clock, latency: 0.2)
            backend = InMemoryTokenBackend(clock: clock, configuration: configuration)
            transport.mount(backend, at: "/token")
            let counter = self.counter
            // The refresh at its scheduled moment, so that the outage below meets it.
            provider = try DriverTokenProvider(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
                refresh: RefreshPolicy(spreadsRefreshes: false), observer: { counter.record($0) })
        }

        /// Looks the token up every 5 s until `end` (seconds from now); the lookups that failed.
        func drive(for seconds: TimeInterval) async -> Int {
            var failed = 0
            let end = clock.now().addingTimeInterval(seconds)
            while clock.now() < end {
                if provider.cachedUsableToken(for: vehicle) == nil {
                    let provider = self.provider
                    let vehicle = self.vehicle
                    let result = await clock.runToCompletion { try await provider.token(for: vehicle) }
                    if case .failure = result { failed += 1 }
                }
                await clock.run(until: clock.now().addingTimeInterval(5))
            }
            return failed
        }
    }

    @Test func aFiveMinuteOutageFailsNoLookupAndShowsInTheCountsByKind() async throws {
        let fleet = try Fleet()
        #expect(await fleet.drive(for: 3000) == 0)
        // Every token request from 50 minutes on answers 503 for a little over 5 minutes: the
        // refresh moment falls inside, and the token's last 5 minutes run out before it ends.
        fleet.transport.inject(.status(503), onPathsStartingWith: "/token", for: 320)
        #expect(await fleet.drive(for: 600) == 0)
        #expect(fleet.counter[.fetchRetried] > 0)
        #expect(fleet.counter[.servedDegraded] > 0)
        #expect(fleet.counter[.fetchSucceeded] == 2)  // the first token, and one after the outage
        #expect(
            fleet.counter[.fetchStarted] == fleet.counter[.fetchSucceeded] + fleet.counter[.fetchRetried]
                + fleet.counter[.fetchFailed] + fleet.counter[.rejected])
        #expect(fleet.counter[.rejected] == 0)
        #expect(fleet.provider.statistics.activeFetches == 0)
    }

    @Test func aTokenForAnotherAudienceCountsAsRejectedNotAsAnOutage() async throws {
        let fleet = try Fleet(backend: .init(audience: "https://another-service.example/"))
        let result = await fleet.clock.runToCompletion { [provider = fleet.provider, vehicle = fleet.vehicle] in
            try await provider.token(for: vehicle)
        }
        guard case .failure(let error as FleetAuthError) = result else {
            Issue.record("expected the token to be refused, got \(result)")
            return
        }
        #expect(error.code == .tokenMismatch)
        #expect(fleet.counter[.rejected] == 1)
        #expect(fleet.counter[.fetchFailed] == 0 && fleet.counter[.fetchRetried] == 0)
        #expect(fleet.counter[.fetchStarted] == 1)
        #expect(fleet.provider.tokenState(for: fleet.vehicle).phase == .failed)
        // The refused token is in no event's text and not in the error.
        let issued = try #require(fleet.backend.issuedTokens.first)
        let leaked = (fleet.counter.text + ["\(error)"]).contains { $0.contains(issued) }
        #expect(!leaked)
    }

    @Test func readingTheStateAtAMomentChangesNothing() async throws {
        let fleet = try Fleet()
        _ = await fleet.drive(for: 3000)
        fleet.transport.inject(.status(503), onPathsStartingWith: "/token", for: 600)
        _ = await fleet.drive(for: 400)
        // 200 s left: below the 5-minute margin, served degraded while the backend fails.
        let before = fleet.provider.statistics
        let state = fleet.provider.tokenState(for: fleet.vehicle)
        #expect(state.phase == .degraded)
        #expect(state.tokenFingerprint != nil && state.expiresAt != nil)
        #expect(fleet.provider.tokenState(for: fleet.vehicle).phase == .degraded)
        #expect(fleet.provider.statistics == before)
    }

    @Test func aReportingLoopKeepsGoingThroughTheOutage() async throws {
        let fleet = try Fleet()
        fleet.transport.mount(InMemoryFleetService(clock: fleet.clock))
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
            vehicleID: "v-42", authorization: fleet.provider, transport: fleet.transport, clock: fleet.clock)
        fleet.transport.inject(.status(503), onPathsStartingWith: "/token", from: 3000, for: 300)
        var sent = 0
        var latest: TimeInterval = 0
        let start = fleet.clock.now()
        while fleet.clock.now() < start.addingTimeInterval(3600) {
            latest = max(latest, fleet.clock.now().timeIntervalSince(start) - Double(sent) * 5)
            let location = VehicleLocation(
                latitude: 52.52, longitude: 13.405, heading: 90, speed: 11.5, accuracy: 4, timestamp: fleet.clock.now())
            _ = await fleet.clock.runToCompletion { try await reporter.report(location) }
            sent += 1
            // Wait for this update's own token work, not for a refresh retrying in the background.
            let provider = fleet.provider
            _ = await fleet.clock.runToCompletion { await provider.waitUntilCallersAnswered() }
            await fleet.clock.run(until: max(fleet.clock.now(), start.addingTimeInterval(Double(sent) * 5)))
        }
        // One update every 5 s for the hour, each within a second of its moment: the loop
        // never stalled behind the refresh retrying through the outage.
        #expect(sent == 720)
        #expect(latest < 1, "an update went out \(latest) s late")
    }
}
