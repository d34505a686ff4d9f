import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

/// An hour of location updates through an 8-minute token-backend outage, against the app's
/// production endpoint, with no network and no waiting: the manual clock moves time.
@Test func updatesKeepFlowingThroughATokenBackendOutage() async throws {
    let clock = ManualWallClock()
    let transport = InMemoryTransport(clock: clock, latency: 0.2)
    // The production endpoint, unchanged: the in-memory backend reads the ID from the path.
    let endpoint = TokenEndpoint(
        url: "https://api.example.com/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp)
    let backend = InMemoryTokenBackend(clock: clock, configuration: .init(format: .jwtWithExpirationTimestamp))
    transport.mount(backend, at: "/token/driver/{vehicleId}")
    let fleetService = InMemoryFleetService(clock: clock, configuration: .init(providerID: "my-project"))
    transport.mount(fleetService)
    let events = EventCounts()
    let provider = try DriverTokenProvider(
        endpoint: endpoint, transport: transport, clock: clock,
        refresh: RefreshPolicy(spreadsRefreshes: false),  // refresh at its scheduled moment, in the outage
        observer: events.record)
    let reporter = try VehicleReporter(
        fleetService: FleetServiceEndpoint(
            baseURL: URL(string: "https://fleet.example.com")!, providerID: "my-project"),
        vehicleID: "v-42", authorization: provider, transport: transport, clock: clock)

    // Every token request answers 503 for 8 minutes from minute 50: past the 5 minutes of
    // life the contract asks a token to have left.
    transport.inject(.status(503), onPathsStartingWith: "/token", from: 3000, for: 480)
    let start = clock.now()
    for step in 0..<720 {  // an update every 5 s for an hour
        await clock.run(until: start.addingTimeInterval(Double(step) * 5))
        let location = VehicleLocation(
            latitude: 52.52, longitude: 13.405, heading: 90, speed: 11.5, accuracy: 4, timestamp: clock.now())
        let sent = await clock.runToCompletion { try await reporter.report(location) }
        if case .failure(let error) = sent { Issue.record("update \(step) failed: \(error)") }
        // Let this update's token work finish; a refresh may go on retrying in the background.
        _ = await clock.runToCompletion { await provider.waitUntilCallersAnswered() }
    }

    #expect(fleetService.acceptedCount == 720 && fleetService.rejectedCount == 0)  // counters count every call
    #expect(events[.fetchRetried] > 0)  // the outage met the refresh…
    #expect(events[.servedDegraded] > 0)  // …and the cached token carried the updates through it
    #expect(events[.fetchFailed] == 0 && events[.rejected] == 0)
    #expect(backend.mintedCount == 2)  // the first token, and one after the outage
}

/// Counts token events by kind, as an app's metrics would.
// Safe to share across threads: every access to `counts` holds `lock`.
final class EventCounts: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [TokenEvent.Kind: Int] = [:]

    func record(_ event: TokenEvent) {
        lock.withLock { counts[event.kind, default: 0] += 1 }
    }

    subscript(kind: TokenEvent.Kind) -> Int {
        lock.withLock { counts[kind] ?? 0 }
    }
}
