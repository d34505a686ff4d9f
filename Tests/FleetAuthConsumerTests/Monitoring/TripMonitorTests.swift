import FleetAuthConsumer
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Trip monitor", .timeLimit(.minutes(10)))
struct TripMonitorTests {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let backend: InMemoryTokenBackend
    let fleet: InMemoryFleetService
    let provider: ConsumerTokenProvider
    let monitor: TripMonitor

    init() throws {
        transport = InMemoryTransport(clock: clock)
        backend = InMemoryTokenBackend(clock: clock)
        fleet = InMemoryFleetService(clock: clock)
        transport.mount(backend, at: "/trip-token")
        transport.mount(fleet)
        provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/trip-token"), transport: transport, clock: clock)
        monitor = try TripMonitor(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
            authorization: provider, transport: transport, clock: clock)
        for trip in ["t-1", "t-2", "t-3"] { fleet.addTrip(trip, vehicleID: "v-\(trip)", duration: 600) }
    }

    @Test func fetchesATripWithItsOwnToken() async throws {
        let snapshot = try await monitor.fetchTrip("t-1")
        #expect(snapshot.tripID == "t-1" && snapshot.vehicleID == "v-t-1" && snapshot.status == "NEW")
        #expect(snapshot.remainingDistanceMeters == 12_000)
        let call = try #require(fleet.calls.first)
        #expect(call.accepted && call.method == "GET" && call.scope == .trip("t-1"))
    }

    @Test func followsTripsAndShipmentsInOneStreamEachWithItsOwnToken() async throws {
        var seen: [AuthorizationScope: TripSnapshot] = [:]
        for await update in monitor.updates(for: ["t-1"], trackingIDs: ["s-1", "s-2"], every: 60, rounds: 1) {
            seen[update.scope] = try update.result.get()
        }
        #expect(Set(seen.keys) == [.trip("t-1"), .tracking("s-1"), .tracking("s-2")])
        #expect(seen[.tracking("s-1")]?.status == "OPEN" && seen[.tracking("s-1")]?.tripID == "s-1")
        let trackingCalls = fleet.calls.filter { $0.scope?.kind == .tracking }
        #expect(trackingCalls.count == 2 && trackingCalls.allSatisfy(\.accepted))
        let tracked = try #require(provider.engine.cachedToken(for: .tracking("s-2")))
        #expect(tracked.claims.authorization["trackingid"] == ["s-2"])
        #expect(transport.requests.contains { $0.url.path == "/v1/providers/demo-project/taskTrackingInfo/s-2" })
    }

    @Test func aTripTokenDoesNotOpenAShipment() async throws {
        let transport = InMemoryTransport(clock: clock)
        transport.mount(fleet)
        transport.route("/trip-token") { request in
            // A backend that always mints a trip token, whatever it is asked for.
            var asTrip = request
            asTrip.url = URL(string: "https://backend.example.com/trip-token?tripId=s-1")!
            return try await self.backend.respond(to: asTrip)
        }
        let provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/trip-token"), transport: transport, clock: clock)
        do {
            _ = try await provider.token(for: .tracking("s-1"))
            Issue.record("a trip token was accepted for a shipment")
        } catch let error as FleetAuthError {
            #expect(error.reason == .scopeMismatch)
        }
    }

    @Test func followsSeveralTripsAtOnceOnTheClock() async throws {
        let stream = monitor.updates(for: ["t-1", "t-2", "t-3"], every: 60, rounds: 3)
        var iterator = stream.makeAsyncIterator()
        var updates: [TripUpdate] = []
        for round in 0..<3 {
            for _ in 0..<3 { updates.append(try #require(await iterator.next())) }
            if round < 2 {
                await clock.waitForSleepers(count: 3)
                clock.advance(by: 60)
            }
        }
        #expect(await iterator.next() == nil)  // three rounds, then the stream ends
        #expect(updates.count == 9)
        let snapshots = try updates.map { try $0.result.get() }
        #expect(Set(snapshots.map(\.tripID)) == ["t-1", "t-2", "t-3"])
        #expect(snapshots.suffix(3).allSatisfy { $0.status == "ENROUTE_TO_PICKUP" })
        // One token per trip, each call covered by its own trip's token.
        #expect(backend.mintedCount == 3)
        let fingerprints = Dictionary(grouping: fleet.calls, by: { $0.scope!.id }).mapValues {
            Set($0.map(\.tokenFingerprint))
        }
        #expect(fingerprints.values.allSatisfy { $0.count == 1 })
        #expect(Set(fingerprints.values.flatMap { $0 }).count == 3)
        #expect(fleet.rejectedCount == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func stoppingIterationCancelsPolling() async throws {
        var iterator: AsyncStream<TripUpdate>.Iterator? = monitor.updates(for: ["t-1"], every: 10).makeAsyncIterator()
        _ = await iterator?.next()
        iterator = nil  // the consumer walks away
        _ = try await clock.settled { clock.sleeperCount == 0 && fleet.calls.count == 1 ? true : nil }
        clock.advance(by: 100)
        #expect(fleet.calls.count == 1)
    }

    @Test func rejectedTripTokenIsReplacedOnce() async throws {
        _ = try await monitor.fetchTrip("t-2")
        fleet.rejectNext([401])
        _ = try await monitor.fetchTrip("t-2")
        #expect(fleet.calls.map(\.status) == [200, 401, 200])
        #expect(backend.mintedCount == 2)
    }

    @Test func errorsArriveAsTypedUpdates() async throws {
        var iterator = monitor.updates(for: ["t-unknown"], every: 10, rounds: 1).makeAsyncIterator()
        let update = try #require(await iterator.next())
        switch update.result {
        case .success: Issue.record("expected a service fault")
        case .failure(let error):
            #expect(error.fault == .service && error.status == 404)
        }
    }
}
