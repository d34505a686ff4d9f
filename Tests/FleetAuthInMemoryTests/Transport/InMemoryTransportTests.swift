import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("In-memory transport", .timeLimit(.minutes(10)))
struct InMemoryTransportTests {
    let url = URL(string: "https://backend.example.com/hello?x=1")!

    @Test func routesRecordAndDefaultTo404() async throws {
        let transport = InMemoryTransport()
        transport.route("/hello", method: "GET") { _ in TransportResponse(status: 200, body: Data("hi".utf8)) }
        let hit = try await transport.send(TransportRequest(url: url))
        let wrongMethod = try await transport.send(TransportRequest(method: "POST", url: url))
        let miss = try await transport.send(TransportRequest(url: URL(string: "https://backend.example.com/nope")!))
        #expect(hit.status == 200 && hit.body == Data("hi".utf8))
        #expect(hit.url == url)
        #expect(wrongMethod.status == 404 && miss.status == 404)
        #expect(transport.requests.map(\.method) == ["GET", "POST", "GET"])
    }

    /// Of two overlapping fault windows, the one added last applies while both are open; the
    /// first applies alone where the second is closed.
    @Test func ofOverlappingFaultWindowsTheOneAddedLastApplies() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        transport.inject(.status(503), onPathsStartingWith: "/hello", for: 20)
        transport.inject(.status(429), onPathsStartingWith: "/hello", from: 5, for: 10)
        var statuses: [Int] = []
        for _ in 0..<5 {
            statuses.append(try await transport.send(TransportRequest(url: url)).status)
            clock.advance(by: 5)
        }
        #expect(statuses == [503, 429, 429, 503, 200])
    }

    @Test func laterRoutesTakePrecedence() async throws {
        let transport = InMemoryTransport()
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        transport.route("/hello") { _ in TransportResponse(status: 201) }
        #expect(try await transport.send(TransportRequest(url: url)).status == 201)
    }

    @Test func latencyIsSleptOnTheInjectedClock() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: 0.25)
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        let request = TransportRequest(url: url)
        let pending = Task { try await transport.send(request) }
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline == clock.now().addingTimeInterval(0.25))
        clock.advance(by: 0.25)
        #expect(try await pending.value.status == 200)
    }

    @Test func scriptedFaultsApplyInOrderThenTheRouteAnswers() async throws {
        let transport = InMemoryTransport()
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        transport.inject([.status(503, headers: ["Retry-After": "1"]), .connectionFailure])
        let first = try await transport.send(TransportRequest(url: url))
        #expect(first.status == 503 && first.header("retry-after") == "1")
        await #expect(throws: URLError.self) { try await transport.send(TransportRequest(url: url)) }
        #expect(try await transport.send(TransportRequest(url: url)).status == 200)
    }

    @Test func faultInjectorSeesTheRequestIndex() async throws {
        let transport = InMemoryTransport()
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        transport.setFaultInjector { _, index in index % 2 == 0 ? .status(503) : nil }
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try await transport.send(TransportRequest(url: url)).status) }
        #expect(statuses == [503, 200, 503, 200])
    }

    @Test func aFaultInjectorMayReadTheTransport() async throws {
        // The injector runs outside the transport's lock: reading its state does not deadlock.
        let transport = InMemoryTransport()
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        transport.setFaultInjector { _, _ in transport.requestCount > 2 ? .status(503) : nil }
        var statuses: [Int] = []
        for _ in 0..<3 { statuses.append(try await transport.send(TransportRequest(url: url)).status) }
        #expect(statuses == [200, 200, 503])
    }

    @Test(.timeLimit(.minutes(1)))
    func aDelayWaitsOnTheClockAfterTheLatencyThenTheRouteAnswers() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: 0.25)
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        transport.inject([.delay(2)])
        let request = TransportRequest(url: url)
        let pending = Task { try await transport.send(request) }
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline == clock.now().addingTimeInterval(0.25))
        clock.advance(by: 0.25)
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline == clock.now().addingTimeInterval(2))
        clock.advance(by: 2)
        let response = try await pending.value
        #expect(response.status == 200 && response.url == url)
    }

    @Test func aClockOfTheAppsOwnSleepsTheLatency() async throws {
        // Any clock but the manual one is slept on through `WallClock.sleep(for:)`.
        let clock = SleepRecordingClock()
        let transport = InMemoryTransport(clock: clock, latency: 0.25)
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        transport.inject([.delay(2)])
        #expect(try await transport.send(TransportRequest(url: url)).status == 200)
        #expect(try await transport.send(TransportRequest(url: url)).status == 200)
        #expect(clock.sleeps.withLock { $0 } == [0.25, 2, 0.25])
    }

    @Test func hangEndsOnlyByCancellation() async {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.inject([.hang])
        let request = TransportRequest(url: url)
        let pending = Task { try await transport.send(request) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 3600)
        await clock.waitForSleepers(count: 1)
        pending.cancel()
        await #expect(throws: CancellationError.self) { try await pending.value }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theLatencyReadsBackAndAChangeAppliesToTheNextRequest() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: 2)
        #expect(transport.latency == 2)
        transport.latency = 0
        #expect(transport.latency == 0)
        transport.route("/hello") { _ in TransportResponse(status: 200) }
        // With no latency the answer comes without the clock moving (horizon 0: waiting on the
        // clock fails at once).
        let url = URL(string: "https://backend.example.com/hello")!
        let response = try await clock.runToCompletion(horizon: 0) {
            try await transport.send(TransportRequest(url: url))
        }.get()
        #expect(response.status == 200)
    }
}

/// A backend mounted at the production endpoint's path template serves the URLs the SDK
/// builds from it, reading the ID from the path.
@Suite("Mounting at a path template", .timeLimit(.minutes(10)))
struct InMemoryTransportTemplateTests {
    @Test(arguments: [
        ("/token/driver/{vehicleId}", AuthorizationScope.vehicle("v 42/x"), "vehicleid"),
        ("/token/consumer/{tripId}", .trip("t-7"), "tripid"),
        ("/token/delivery_consumer/{trackingId}", .tracking("s-1"), "trackingid"),
        ("/tokens/{id}/jwt", .vehicle("v-9"), "vehicleid"),
    ])
    func servesTheEndpointsOwnURLs(path: String, scope: AuthorizationScope, claimKey: String) async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: path)
        let endpoint = TokenEndpoint(url: "https://api.example.com" + path)
        let request = try await endpoint.request(for: scope)
        let response = try await transport.send(request)
        #expect(response.status == 200, "\(request.url)")
        let token = try TokenResponseParser(format: .tokenOnly).token(
            from: response, for: scope, receivedAt: clock.now())
        #expect(token.scope == scope)
    }

    @Test func otherPathsAreNotServed() async throws {
        let transport = InMemoryTransport()
        transport.mount(InMemoryTokenBackend(), at: "/token/driver/{vehicleId}")
        for path in ["/token/driver", "/token/driver/", "/token/driver/v-1/extra", "/token/drivers/v-1"] {
            let response = try await transport.send(TransportRequest(url: URL(string: "https://a.example" + path)!))
            #expect(response.status == 404, "\(path)")
        }
    }
}

/// A clock whose sleeps return at once and are recorded.
private final class SleepRecordingClock: WallClock {
    let sleeps = LockedState<[TimeInterval]>([])
    func now() -> Date { Date(timeIntervalSince1970: 1_800_000_000) }
    func sleep(for duration: TimeInterval) async throws { sleeps.withLock { $0.append(duration) } }
}
