import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// A reporter wired to the in-memory token backend and fleet service on one clock.
struct ReporterFixture {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let backend: InMemoryTokenBackend
    let fleet: InMemoryFleetService
    let provider: DriverTokenProvider
    /// The clock's uptime when the fixture was made.
    let origin: TimeInterval

    init(lifetime: TimeInterval = 3600) throws {
        transport = InMemoryTransport(clock: clock)
        backend = InMemoryTokenBackend(clock: clock, configuration: .init(lifetime: lifetime))
        fleet = InMemoryFleetService(clock: clock)
        transport.mount(backend, at: "/driver-token")
        transport.mount(fleet)
        provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport,
            clock: clock,
            // One vehicle's refresh schedule to the second: the fleet's spread has its own tests.
            refresh: RefreshPolicy(spreadsRefreshes: false)
        )
        origin = clock.uptime()
    }

    /// A reporter on the fixture's transport, or on a ``RelayTransport`` over it (`relayed`):
    /// through that, each update runs in a task of its own, as over a network.
    func reporter(
        _ vehicleID: String, authorization: (any DriverAuthorization)? = nil, relayed: Bool = false
    ) throws(FleetServiceError) -> VehicleReporter {
        try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
            vehicleID: vehicleID, authorization: authorization ?? provider,
            transport: relayed ? RelayTransport(next: transport) : transport, clock: clock)
    }

    func location(_ step: Int = 0) -> VehicleLocation {
        VehicleLocation(
            latitude: 52.52 + Double(step) * 0.0001, longitude: 13.405, heading: 90, speed: 11.5, accuracy: 4,
            timestamp: clock.now())
    }
}

/// Hands each request to an in-memory transport, as an app's own transport hands it to its
/// HTTP stack: a transport FleetAuth does not know to answer in process.
struct RelayTransport: HTTPTransport {
    let next: InMemoryTransport

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await next.send(request)
    }
}

@Suite("Vehicle reporter", .timeLimit(.minutes(10)))
struct VehicleReporterTests {
    @Test(arguments: [false, true]) func updateCarriesAValidTokenForItsOwnVehicle(relayed: Bool) async throws {
        let f = try ReporterFixture()
        let receipt = try await f.reporter("v-42", relayed: relayed).report(f.location())
        #expect(receipt.status == 200 && receipt.attempts == 1)
        let call = try #require(f.fleet.calls.first)
        #expect(call.accepted && call.method == "PUT" && call.scope == .vehicle("v-42"))
        #expect(call.tokenFingerprint == receipt.tokenFingerprint)
        let update = try #require(f.transport.requests.last)
        #expect(
            update.url.absoluteString
                == "https://fleet.example.com/v1/providers/demo-project/vehicles/v-42?updateMask=lastLocation")
        let body = try #require(f.fleet.lastUpdate(of: "v-42"))
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let last = try #require(object["lastLocation"] as? [String: Any])
        #expect((last["location"] as? [String: Double])?["latitude"] == 52.52)
        #expect(last["heading"] as? Int == 90 && last["speed"] as? Double == 11.5)
        #expect(last["horizontalAccuracy"] as? Double == 4 && last["updateTime"] is String)
    }

    @Test func twoVehiclesEachSendTheirOwnToken() async throws {
        let f = try ReporterFixture()
        let a = try f.reporter("v-1")
        let b = try f.reporter("v-2")
        for step in 0..<10 {
            _ = try await a.report(f.location(step))
            _ = try await b.report(f.location(step))
            f.clock.advance(by: 5)
        }
        #expect(f.fleet.acceptedCount == 20 && f.fleet.rejectedCount == 0)
        #expect(f.backend.mintedCount == 2)
        let byVehicle = Dictionary(grouping: f.fleet.calls, by: { $0.scope?.id ?? "" })
        #expect(Set(byVehicle["v-1"]!.map(\.tokenFingerprint)).count == 1)
        #expect(byVehicle["v-1"]!.first!.tokenFingerprint != byVehicle["v-2"]!.first!.tokenFingerprint)
    }

    @Test(arguments: [false, true]) func rejectedTokenIsInvalidatedAndTheUpdateRetriedOnce(relayed: Bool) async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", relayed: relayed)
        _ = try await reporter.report(f.location())
        f.fleet.rejectNext([401])
        let receipt = try await reporter.report(f.location(1))
        #expect(receipt.attempts == 2)
        #expect(f.backend.mintedCount == 2)
        let calls = f.fleet.calls
        #expect(calls.map(\.status) == [200, 401, 200])
        #expect(calls[1].tokenFingerprint == calls[0].tokenFingerprint)
        #expect(calls[2].tokenFingerprint != calls[1].tokenFingerprint)
        // Later updates reuse the fresh token: no further fetches.
        _ = try await reporter.report(f.location(2))
        #expect(f.backend.mintedCount == 2)
    }

    /// The reporter keeps one vehicle's update headers while its token stays the same: each
    /// update must still carry the token it was given, after a refused token was replaced and
    /// after the old one expired.
    @Test func eachUpdateCarriesTheTokenItWasGivenWhenTheTokenChanges() async throws {
        let f = try ReporterFixture(lifetime: 600)
        let reporter = try f.reporter("v-42")
        let context = DriverAuthorizationContext(vehicleID: "v-42")
        var sent: [(fingerprint: String, header: String?)] = []
        func report(_ step: Int) async throws {
            let receipt = try await reporter.report(f.location(step))
            let current = try await f.provider.token(for: context)
            // The fleet service fingerprints the header it was sent, the receipt the token.
            #expect(f.fleet.calls.last?.tokenFingerprint == current.fingerprint)
            sent.append((receipt.tokenFingerprint, f.transport.requests.last?.header("Authorization")))
            #expect(sent.last?.header == "Bearer \(current.value)")
        }
        try await report(0)
        try await report(1)
        f.fleet.rejectNext([401])
        try await report(2)  // refused, then sent again with a fresh token
        try await report(3)
        f.clock.advance(by: 900)  // past the second token's expiry
        try await report(4)
        try await report(5)
        #expect(f.backend.mintedCount == 3)
        let fingerprints = sent.map(\.fingerprint)
        #expect(Set(fingerprints).count == 3)
        #expect(fingerprints[0] == fingerprints[1] && fingerprints[2] == fingerprints[3])
        #expect(fingerprints[4] == fingerprints[5] && fingerprints[1] != fingerprints[2])
        // The refused first attempt of update 2 carried the first token.
        #expect(f.fleet.calls.map(\.tokenFingerprint) == [0, 1, 1, 2, 3, 4, 5].map { fingerprints[$0] })
    }

    @Test func secondRejectionIsATokenFaultWithoutAStorm() async throws {
        let f = try ReporterFixture()
        f.fleet.rejectNext([401, 401])
        do {
            _ = try await f.reporter("v-42").report(f.location())
            Issue.record("expected a token fault")
        } catch {
            #expect(error.fault == .token)
            #expect(error.status == 401)
            #expect(error.message.contains("refused a freshly fetched token too (HTTP 401"))
            #expect(error.message.contains("PUT /v1/providers/demo-project/vehicles/v-42"))
        }
        #expect(f.fleet.calls.count == 2)
        #expect(f.backend.mintedCount == 2)
    }

    @Test func aForbiddenFreshTokenStopsAtOnceWithTheServicesReason() async throws {
        let f = try ReporterFixture()
        f.fleet.rejectNext([403])
        do {
            _ = try await f.reporter("v-42").report(f.location())
            Issue.record("expected a token fault")
        } catch {
            #expect(error.fault == .token && error.status == 403)
            #expect(error.message.hasPrefix("The fleet service refused a token minted 0 s ago (HTTP 403"))
            #expect(error.message.contains("the call was not repeated"))
            #expect(!error.message.contains(".."))
        }
        // One call, one token: a refetch would only have minted the same permissions.
        #expect(f.fleet.calls.count == 1)
        #expect(f.backend.mintedCount == 1)
    }

    @Test func aForbiddenOlderTokenIsReplacedOnce() async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42")
        _ = try await reporter.report(f.location())
        f.clock.advance(by: 120)
        f.fleet.rejectNext([403])
        let receipt = try await reporter.report(f.location(1))
        #expect(receipt.attempts == 2)
        #expect(f.backend.mintedCount == 2)
    }

    /// A seed-style provider that hands out a token that has already expired.
    final class ExpiredTokenProvider: DriverAuthorization {
        let token: String
        let invalidations = LockedState(0)
        init(token: String) { self.token = token }
        func fetchToken(
            with authorizationContext: DriverAuthorizationContext?,
            completion: @escaping AuthTokenFetchCompletionHandler
        ) {
            let token = self.token
            Task { completion(token, nil) }
        }
        func invalidate(_ token: String, for authorizationContext: DriverAuthorizationContext) -> Bool {
            invalidations.withLock { $0 += 1 }
            return true
        }
    }

    @Test(arguments: [false, true]) func aTokenKnownToBeExpiredIsNeverSent(relayed: Bool) async throws {
        let f = try ReporterFixture()
        let expired = InMemoryTokenBackend.jwt(payload: [
            "aud": "https://fleet.example.com/", "iat": f.clock.now().timeIntervalSince1970 - 4000,
            "exp": f.clock.now().timeIntervalSince1970 - 400, "authorization": ["vehicleid": "v-42"],
        ])
        let provider = ExpiredTokenProvider(token: expired)
        do {
            _ = try await f.reporter("v-42", authorization: provider, relayed: relayed).report(f.location())
            Issue.record("expected a token fault")
        } catch {
            #expect(error.fault == .token)
            #expect(error.message.hasPrefix("The provider returned an expired token twice; nothing was sent."))
            #expect((error.underlyingError as? FleetAuthError)?.reason == .tokenExpired)
        }
        #expect(f.fleet.calls.isEmpty)
        #expect(provider.invalidations.withLock { $0 } == 1)
    }

    @Test(arguments: [false, true]) func faultsNameTheNetworkAndTheService(relayed: Bool) async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", relayed: relayed)
        _ = try await reporter.report(f.location())  // token cached
        f.transport.inject([.connectionFailure])
        await #expect(throws: FleetServiceError.self) { _ = try await reporter.report(f.location()) }
        do { _ = try await reporter.report(f.location()) } catch { Issue.record("\(error)") }
        f.fleet.rejectNext([503])
        do {
            _ = try await reporter.report(f.location())
            Issue.record("expected a service fault")
        } catch {
            #expect(error.fault == .service && error.status == 503)
        }
        f.transport.inject([.connectionFailure])
        do {
            _ = try await reporter.report(f.location())
        } catch {
            #expect(error.fault == .network)
            #expect(error.underlyingError is URLError)
        }
    }

    @Test(arguments: [
        VehicleLocation(latitude: 91, longitude: 0, timestamp: Date()),
        VehicleLocation(latitude: .nan, longitude: 0, timestamp: Date()),
        VehicleLocation(latitude: 0, longitude: -181, timestamp: Date()),
        VehicleLocation(latitude: 0, longitude: 0, heading: 360, timestamp: Date()),
        VehicleLocation(latitude: 0, longitude: 0, speed: -1, timestamp: Date()),
        VehicleLocation(latitude: 0, longitude: 0, accuracy: .infinity, timestamp: Date()),
    ])
    func implausibleLocationsAreCallerFaultsAndSendNothing(location: VehicleLocation) async throws {
        let f = try ReporterFixture()
        do {
            _ = try await f.reporter("v-42").report(location)
            Issue.record("expected a caller fault")
        } catch {
            #expect(error.fault == .caller)
        }
        #expect(f.transport.requestCount == 0)
    }

    @Test(arguments: ["", " v", "v\n"])
    func malformedVehicleIDsAreRefusedAtConstruction(id: String) throws {
        let f = try ReporterFixture()
        #expect(throws: FleetServiceError.self) { _ = try f.reporter(id) }
    }

    @Test func insecureFleetURLIsRefused() throws {
        let f = try ReporterFixture()
        #expect(throws: FleetServiceError.self) {
            _ = try VehicleReporter(
                fleetService: FleetServiceEndpoint(baseURL: URL(string: "http://fleet.example.com")!, providerID: "p"),
                vehicleID: "v-1", authorization: f.provider, transport: f.transport)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [false, true]) func updatesOfOneVehicleAreNeverInFlightTogether(relayed: Bool) async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", relayed: relayed)
        _ = try await reporter.report(f.location())  // warm the token: 2 requests
        f.transport.latency = 1
        let reports = (1...3).map { step in f.clock.startSimulated { try await reporter.report(f.location(step)) } }
        for sent in 1...3 {
            await f.clock.waitForSleepers(count: 1, within: 2)
            #expect(f.transport.requestCount == 2 + sent)  // exactly one more request in flight
            f.clock.advance(by: 1)
            _ = try await f.clock.settled { f.fleet.calls.count == 1 + sent ? true : nil }
        }
        for report in reports { _ = try await report.value }
        #expect(f.fleet.acceptedCount == 4)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [false, true]) func anUpdateCancelledBeforeItsTurnSendsNothingAndSaysSo(relayed: Bool) async throws
    {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", relayed: relayed)
        _ = try await reporter.report(f.location())  // warm the token: 2 requests
        f.transport.latency = 1
        let first = f.clock.startSimulated { try await reporter.report(f.location(1)) }
        await f.clock.waitForSleepers(count: 1, within: 2)  // the first holds the turn, in flight
        let second = f.clock.startSimulated { try await reporter.report(f.location(2)) }
        await f.clock.settle()  // the second waits for its turn
        second.cancel()
        do {
            _ = try await second.value
            Issue.record("expected the cancelled update to fail")
        } catch let error as FleetServiceError {
            #expect(error.fault == .caller)
            #expect(error.message == "The update was cancelled before its turn; nothing was sent.")
            #expect(error.underlyingError is CancellationError)
        }
        #expect(f.transport.requestCount == 3)  // the warm-up's two and the first update
        f.clock.advance(by: 1)
        #expect(try await first.value.status == 200)
        #expect(f.fleet.acceptedCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [false, true]) func updatesWaitingForTheFirstTokenAreSentInTheOrderReported(relayed: Bool)
        async throws
    {
        // Each update waits for the vehicle's first token after taking its turn, so the
        // three waiters, answered together, still go out in the order they were reported.
        let f = try ReporterFixture()
        f.transport.latency = 1
        let reporter = try f.reporter("v-42", relayed: relayed)
        var reports: [Task<VehicleReporter.Receipt, any Error>] = []
        for step in 1...3 {
            reports.append(f.clock.startSimulated { try await reporter.report(f.location(step)) })
            await f.clock.settle()
        }
        await f.clock.run(until: f.clock.now().addingTimeInterval(10))
        for report in reports { _ = try await report.value }
        let sentLatitudes = f.transport.requests.filter { $0.method == "PUT" }.map { request in
            String(decoding: request.body ?? Data(), as: UTF8.self)
        }
        #expect(sentLatitudes.count == 3)
        for (index, body) in sentLatitudes.enumerated() {
            #expect(body.contains("\"latitude\":\(f.location(index + 1).latitude)"), "\(body)")
        }
        #expect(f.backend.mintedCount == 1)
    }

    @Test func anUpdateWithACachedTokenLooksItUpOnce() async throws {
        // What the statistics and the servedFresh events count: one lookup an update.
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42")
        _ = try await reporter.report(f.location())  // warm the token
        let before = f.provider.statistics.hits
        for step in 1...3 { _ = try await reporter.report(f.location(step)) }
        #expect(f.provider.statistics.hits - before == 3)
    }

    /// A provider without a cache of its own: each call of `fetchToken` goes to FleetAuth's.
    struct UncachedProvider: DriverAuthorization {
        let inner: DriverTokenProvider
        let calls = LockedState(0)
        func fetchToken(
            with authorizationContext: DriverAuthorizationContext?,
            completion: @escaping AuthTokenFetchCompletionHandler
        ) {
            calls.withLock { $0 += 1 }
            inner.fetchToken(with: authorizationContext, completion: completion)
        }
    }

    @Test func aProviderWithoutACacheIsAskedOncePerUpdate() async throws {
        let f = try ReporterFixture()
        let provider = UncachedProvider(inner: f.provider)
        let reporter = try f.reporter("v-42", authorization: provider)
        for step in 1...3 { _ = try await reporter.report(f.location(step)) }
        #expect(provider.calls.withLock { $0 } == 3)
        #expect(f.fleet.acceptedCount == 3)
    }

    @Test func aRevokedTokenCausesExactlyOneRefetchAcrossManyConcurrentReporters() async throws {
        let f = try ReporterFixture()
        let reporters = try (0..<20).map { _ in try f.reporter("v-1") }  // one vehicle, many senders
        let first = try await reporters[0].report(f.location())
        f.fleet.revoke(tokenFingerprint: first.tokenFingerprint)
        let receipts = try await withThrowingTaskGroup(of: VehicleReporter.Receipt.self) { group in
            for (index, reporter) in reporters.enumerated() {
                group.addTask { try await reporter.report(f.location(index)) }
            }
            return try await group.reduce(into: [VehicleReporter.Receipt]()) { $0.append($1) }
        }
        #expect(f.backend.mintedCount == 2)  // the revoked token was replaced once, not 20 times
        #expect(receipts.allSatisfy { $0.status == 200 && $0.tokenFingerprint != first.tokenFingerprint })
        #expect(f.fleet.calls.filter { !$0.accepted }.allSatisfy { $0.tokenFingerprint == first.tokenFingerprint })
    }

    @Test func manyReportersOnOneRejectionCauseExactlyOneRefetchEach() async throws {
        let f = try ReporterFixture()
        let reporters = try (0..<5).map { try f.reporter("v-\($0)") }
        for reporter in reporters { _ = try await reporter.report(f.location()) }
        let minted = f.backend.mintedCount
        f.fleet.rejectNext([401])
        _ = try await reporters[0].report(f.location(1))
        for reporter in reporters.dropFirst() { _ = try await reporter.report(f.location(1)) }
        #expect(f.backend.mintedCount == minted + 1)
    }
}

@Suite("Vehicle reporter: honest rejection errors", .timeLimit(.minutes(10)))
struct HonestRejectionTests {
    @Test func aReissuedTokenCarriesTheFleetServicesOwnReason() async throws {
        // A backend that mints for the wrong audience and signs deterministically: asked
        // again within the second, it hands back the very token the fleet service refused.
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let backend = InMemoryTokenBackend(
            clock: clock,
            configuration: .init(
                audience: "https://other.example/", editPayload: { _, payload in payload["jti"] = nil }))
        let fleet = InMemoryFleetService(clock: clock)
        transport.mount(backend, at: "/driver-token")
        transport.mount(fleet)
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport,
            clock: clock,
            rules: TokenRules(expectedAudience: "https://other.example/"))
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
            vehicleID: "v-42", authorization: provider, transport: transport, clock: clock)
        do {
            _ = try await reporter.report(
                VehicleLocation(latitude: 52.52, longitude: 13.4, timestamp: clock.now()))
            Issue.record("an update with a rejected token was accepted")
        } catch {
            #expect(error.fault == .token)
            let cause = try #require(error.underlyingError as? FleetAuthError)
            #expect(cause.reason == .rejectedTokenReissued)
            #expect(cause.status == 401)
            #expect(cause.message.contains("wrong audience"))
            #expect((cause.underlyingError as? TokenRejection)?.message == "wrong audience")
        }
    }

    @Test func theServicesMessageNeverEchoesTheToken() {
        let body = Data(#"{"error": {"code": 401, "message": "Bad token abc.def.ghi here"}}"#.utf8)
        let rejection = TokenRejection(status: 401, body: body, token: "abc.def.ghi")
        #expect(rejection.description == "HTTP 401: Bad token [token] here")
        let long = TokenRejection(status: 403, body: Data(String(repeating: "x", count: 500).utf8), token: "t")
        #expect(long.message.count == 201)
    }
}

@Suite("Vehicle reporter: delivery fleets", .timeLimit(.minutes(10)))
struct DeliveryReporterTests {
    /// A reporter for `fleet`, with tokens minted for `tokenFleet`.
    func report(fleet: FleetFlavor, tokenFleet: FleetFlavor, providerFleet: FleetFlavor? = nil) async throws
        -> (Result<VehicleReporter.Receipt, FleetServiceError>, InMemoryTransport, InMemoryFleetService)
    {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let fleetService = InMemoryFleetService(clock: clock)
        transport.mount(
            InMemoryTokenBackend(clock: clock, configuration: .init(fleet: tokenFleet)), at: "/token")
        transport.mount(fleetService)
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
            rules: TokenRules(fleet: providerFleet ?? fleet))
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project", fleet: fleet),
            vehicleID: "dv-7", authorization: provider, transport: transport, clock: clock)
        do {
            let receipt = try await reporter.report(
                VehicleLocation(latitude: 52.5, longitude: 13.4, timestamp: clock.now()))
            return (.success(receipt), transport, fleetService)
        } catch {
            return (.failure(error), transport, fleetService)
        }
    }

    @Test func aDeliveryVehicleIsPatchedWithADeliveryVehicleToken() async throws {
        let (result, transport, fleet) = try await report(fleet: .delivery, tokenFleet: .delivery)
        #expect(try result.get().status == 200)
        let update = try #require(transport.requests.last)
        #expect(update.method == "PATCH")
        #expect(
            update.url.absoluteString
                == "https://fleet.example.com/v1/providers/demo-project/deliveryVehicles/dv-7?updateMask=lastLocation")
        #expect(fleet.lastUpdate(of: "dv-7") != nil)
    }

    @Test(arguments: [
        (FleetFlavor.delivery, FleetFlavor.onDemand), (FleetFlavor.onDemand, FleetFlavor.delivery),
    ])
    func aTokenForTheOtherFlavorIsRefusedBeforeAnyFleetCall(fleet: FleetFlavor, tokenFleet: FleetFlavor)
        async throws
    {
        let (result, transport, service) = try await report(fleet: fleet, tokenFleet: tokenFleet)
        guard case .failure(let error) = result else {
            Issue.record("the other flavor's token was accepted")
            return
        }
        #expect(error.fault == .token && error.status == nil)
        let cause = try #require(error.underlyingError as? FleetAuthError)
        #expect(cause.reason == .fleetMismatch)
        #expect(cause.message.contains("under `\(tokenFleet.vehicleClaimKey)`"))
        #expect(cause.message.contains("need `\(fleet.vehicleClaimKey)`"))
        #expect(!cause.message.contains(".."))
        // Nothing reached the fleet service, and nothing was cached: one fetch, refused.
        #expect(service.calls.isEmpty)
        #expect(transport.requestCount == 1)
    }

    @Test func aProviderSetForOnDemandNamesTheSettingWhenServedDeliveryTokens() async throws {
        let (result, _, service) = try await report(
            fleet: .delivery, tokenFleet: .delivery, providerFleet: .onDemand)
        guard case .failure(let error) = result else {
            Issue.record("a delivery token passed an on-demand provider")
            return
        }
        #expect(error.message.contains("set TokenRules(fleet: .delivery)"))
        #expect(service.calls.isEmpty)
    }

    @Test func flavorsAreNamedForCommandLines() {
        #expect(FleetFlavor(named: "delivery") == .delivery)
        #expect(FleetFlavor(named: "on-demand") == .onDemand)
        #expect(FleetFlavor(named: "rides") == nil)
    }
}

extension VehicleReporterTests {
    /// `.` and `..` are path steps to a URL: a reporter or provider for them is refused
    /// with the rule named, before any request leaves (a URL normaliser would have sent the
    /// update to the provider's collection, or the token request to `/`).
    @Test(arguments: [".", ".."])
    func aDotSegmentIDIsRefusedBeforeAnyRequest(id: String) async throws {
        let f = try ReporterFixture()
        #expect(throws: FleetServiceError.self) { _ = try f.reporter(id) }
        let error = try await #require(throws: FleetAuthError.self) {
            _ = try await f.provider.token(for: DriverAuthorizationContext(vehicleID: id))
        }
        #expect(error.code == FleetAuthError.Code.invalidContext && error.message.contains("path step"), "\(error)")
        #expect(f.transport.requestCount == 0)
    }
}
