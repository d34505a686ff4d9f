import FleetAuthConsumer
import FleetAuthDriver
import FleetAuthFleetService
import FleetAuthInMemory
import FleetAuthTestSupport
import FleetAuthURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Reporter and monitor over real HTTP against the fleet-service fixture", .timeLimit(.minutes(10)))
struct FleetServiceEndToEndTests {
    let server: LoopbackServer
    let fleet: FleetServiceEndpoint
    init() throws {
        server = try LoopbackServer.running()
        fleet = FleetServiceEndpoint(baseURL: server.baseURL, providerID: "loopback-project")
    }

    /// The fixture's fleet service keeps a copy of the routes in Python; it must be the SDK's
    /// one table, which the endpoint builds URLs from and the in-memory service answers by.
    @Test func theFixtureServesTheSDKsFleetRoutes() async throws {
        let (data, _) = try await URLSession.shared.data(from: URL(string: server.url("/fixture/fleet-routes"))!)
        let served = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: String]])
        let fixture = Set(
            served.map { "\($0["collection"] ?? "") \($0["kind"] ?? "") \($0["method"] ?? "") \($0["claimKey"] ?? "")" }
        )
        let kinds: [AuthorizationScope.Kind: String] = [.vehicle: "vehicle", .trip: "trip", .tracking: "tracking"]
        let sdk = Set(
            FleetServiceRoute.all.map { "\($0.collection) \(kinds[$0.kind] ?? "?") \($0.method) \($0.claimKey)" })
        #expect(fixture == sdk)
    }

    @Test func reporterSendsSignedTokensTheFixtureAccepts() async throws {
        let vehicleID = "v-e2e-\(UUID().uuidString.prefix(6))"
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/expires-in-seconds"), format: .tokenWithExpiresInSeconds),
            transport: URLSessionTransport())
        let reporter = try VehicleReporter(
            fleetService: fleet, vehicleID: vehicleID, authorization: provider, transport: URLSessionTransport())
        for step in 0..<5 {
            let receipt = try await reporter.report(
                VehicleLocation(latitude: 48.85 + Double(step) / 1000, longitude: 2.35, heading: 180, timestamp: Date())
            )
            #expect(receipt.status == 200 && receipt.attempts == 1)
        }
        #expect(try await server.requestCount(key: "fleet-accepted-\(vehicleID)") == 5)
        #expect(try await server.requestCount(key: "fleet-rejected-\(vehicleID)") == 0)
    }

    @Test func aDeliveryVehicleReportsThroughTheDeliverySampleBackend() async throws {
        // The delivery sample backend's route and shape, and nothing else configured.
        let vehicleID = "dv-e2e-\(UUID().uuidString.prefix(6))"
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: server.url("/token/delivery_driver/{vehicleId}"),
                format: .tokenWithExpirationTimestampMilliseconds),
            transport: URLSessionTransport(), rules: TokenRules(fleet: .delivery))
        let delivery = FleetServiceEndpoint(baseURL: server.baseURL, providerID: "loopback-project", fleet: .delivery)
        let reporter = try VehicleReporter(
            fleetService: delivery, vehicleID: vehicleID, authorization: provider, transport: URLSessionTransport())
        let receipt = try await reporter.report(VehicleLocation(latitude: 48.85, longitude: 2.35, timestamp: Date()))
        #expect(receipt.status == 200 && receipt.attempts == 1)
        #expect(try await server.requestCount(key: "fleet-accepted-\(vehicleID)") == 1)
        // An on-demand token is refused on the delivery path.
        let onDemand = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/driver/{vehicleId}"), format: .jwtWithExpirationTimestamp),
            transport: URLSessionTransport())
        let wrong = try VehicleReporter(
            fleetService: delivery, vehicleID: vehicleID, authorization: onDemand, transport: URLSessionTransport())
        do {
            _ = try await wrong.report(VehicleLocation(latitude: 48.85, longitude: 2.35, timestamp: Date()))
            Issue.record("an on-demand token updated a delivery vehicle")
        } catch {
            // A provider not told the flavor lets the token through; the fleet service's 403
            // for a token minted just now stops the call at once, its reason first.
            #expect(error.fault == .token, "\(error)")
            #expect(String(describing: error).contains("HTTP 403: token does not cover"), "\(error)")
            #expect(String(describing: error).contains("was not repeated"), "\(error)")
        }
        #expect(try await server.requestCount(key: "fleet-rejected-\(vehicleID)") == 1)
        // Told the flavor, the provider refuses the on-demand token before any fleet call.
        let told = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/driver/{vehicleId}"), format: .jwtWithExpirationTimestamp),
            transport: URLSessionTransport(), rules: TokenRules(fleet: .delivery))
        let refused = try VehicleReporter(
            fleetService: delivery, vehicleID: vehicleID, authorization: told, transport: URLSessionTransport())
        do {
            _ = try await refused.report(VehicleLocation(latitude: 48.85, longitude: 2.35, timestamp: Date()))
            Issue.record("an on-demand token passed a delivery provider")
        } catch {
            #expect((error.underlyingError as? FleetAuthError)?.reason == .fleetMismatch, "\(error)")
        }
        #expect(try await server.requestCount(key: "fleet-rejected-\(vehicleID)") == 1)
    }

    @Test func unsignedTokensAreRejectedAndReportedAsTokenFaults() async throws {
        let vehicleID = "v-unsigned-\(UUID().uuidString.prefix(6))"
        // The in-memory backend's tokens carry no real signature: the fixture refuses them. The
        // token side runs on a manual clock at today's date: nothing in memory waits, so no
        // timeout of the system clock can run out on it while a loaded test run keeps it queued.
        let clock = ManualWallClock(now: Date())
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock)
        let reporter = try VehicleReporter(
            fleetService: fleet, vehicleID: vehicleID, authorization: provider, transport: URLSessionTransport())
        do {
            _ = try await reporter.report(VehicleLocation(latitude: 1, longitude: 1, timestamp: Date()))
            Issue.record("expected a token fault")
        } catch {
            #expect(error.fault == .token && error.status == 401)
        }
        #expect(try await server.requestCount(key: "fleet-rejected-\(vehicleID)") == 2)  // one retry, no storm
        #expect(transport.requestCount == 2)  // the rejected token was replaced once
    }

    @Test func monitorFollowsAShipmentThroughTheDeliveryConsumerSampleBackend() async throws {
        let provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(
                url: server.url("/token/delivery_consumer/{trackingId}"),
                format: .tokenWithExpirationTimestampMilliseconds),
            transport: URLSessionTransport())
        let monitor = try TripMonitor(fleetService: fleet, authorization: provider, transport: URLSessionTransport())
        let snapshot = try await monitor.fetchTracking("s-e2e")
        #expect(snapshot.tripID == "s-e2e" && snapshot.status == "OPEN")
        #expect(provider.engine.cachedToken(for: .tracking("s-e2e"))?.claims.authorization["trackingid"] == ["s-e2e"])
    }

    @Test func monitorFetchesATripOverHTTP() async throws {
        let provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/plain"), format: .plainText),
            transport: URLSessionTransport())
        let monitor = try TripMonitor(fleetService: fleet, authorization: provider, transport: URLSessionTransport())
        let snapshot = try await monitor.fetchTrip("t-e2e")
        #expect(snapshot.status == "ENROUTE_TO_PICKUP" && snapshot.remainingDistanceMeters == 4200)
    }

    @Test func anAppsOwnURLRequestIsAuthorizedOverHTTP() async throws {
        let vehicleID = "v-own-\(UUID().uuidString.prefix(6))"
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/driver/{vehicleId}"), format: .jwtWithExpirationTimestamp),
            transport: URLSessionTransport())
        let caller = AuthorizedCaller(
            context: DriverAuthorizationContext(vehicleID: vehicleID), authorization: provider,
            transport: URLSessionTransport())
        var request = URLRequest(url: try fleet.vehicleURL(vehicleID, query: "updateMask=vehicleState"))
        request.httpMethod = "PUT"
        request.httpBody = Data(#"{"vehicleState":"ONLINE"}"#.utf8)
        let response = try await caller.send(request)
        #expect(response.status == 200)
        let echoed = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(echoed?["vehicleState"] as? String == "ONLINE")
        #expect(try await server.requestCount(key: "fleet-accepted-\(vehicleID)") == 1)

        // Through the wrapping transport, the same call needs no token code at all.
        let authorizing = AuthorizingTransport(
            base: URLSessionTransport(), context: DriverAuthorizationContext(vehicleID: vehicleID),
            authorization: provider)
        let again = try await authorizing.send(
            TransportRequest(method: "PUT", url: request.url!, body: request.httpBody))
        #expect(again.status == 200)
        #expect(try await server.requestCount(key: "fleet-accepted-\(vehicleID)") == 2)

        // A streamed body could not be resent after a rejected token: refused, nothing sent.
        var streamed = request
        streamed.httpBodyStream = InputStream(data: Data("{}".utf8))
        do {
            _ = try await caller.send(streamed)
            Issue.record("expected a caller fault")
        } catch {
            #expect(error.fault == .caller && error.message.contains("httpBody"))
        }
        #expect(try await server.requestCount(key: "fleet-accepted-\(vehicleID)") == 2)
    }
}
