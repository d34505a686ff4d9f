import FleetAuthCore
import FleetAuthFleetService
import FleetAuthInMemory
import Foundation
import Testing

/// A vehicle context of the app's own, as a test of an app would write it.
struct VanContext: AuthorizationContext {
    var vehicleID: String
    var scope: AuthorizationScope { AuthorizationScope(kind: .vehicle, id: vehicleID) }
}

/// An in-memory token backend and fleet service behind one transport, on a manual clock.
struct CallerFixture {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let backend: InMemoryTokenBackend
    let fleet: InMemoryFleetService
    let provider: TokenProvider<VanContext>

    init() throws {
        transport = InMemoryTransport(clock: clock)
        backend = InMemoryTokenBackend(clock: clock)
        fleet = InMemoryFleetService(clock: clock)
        transport.mount(backend, at: "/driver-token")
        transport.mount(fleet)
        provider = try TokenProvider<VanContext>(
            endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport,
            clock: clock)
    }

    var caller: AuthorizedCaller<VanContext> {
        AuthorizedCaller(context: VanContext(vehicleID: "v-42"), authorization: provider, transport: transport)
    }

    /// An app's own call: a vehicle update with a field the SDK never sends itself.
    func customUpdate(host: String = "https://fleet.example.com") -> TransportRequest {
        TransportRequest(
            method: "PUT", url: URL(string: "\(host)/v1/providers/demo-project/vehicles/v-42?updateMask=vehicleState")!,
            headers: ["Content-Type": "application/json"], body: Data(#"{"vehicleState":"ONLINE"}"#.utf8))
    }
}

@Suite("Authorized calls for an app's own requests", .timeLimit(.minutes(10)))
struct AuthorizedCallerTests {
    @Test func aCustomCallWithARevokedTokenIsRefetchedOnceAndResentOnce() async throws {
        let f = try CallerFixture()
        // Warm the cache, then revoke the cached token at the fleet service.
        let first = try await f.provider.token(for: VanContext(vehicleID: "v-42"))
        f.fleet.revoke(tokenFingerprint: first.fingerprint)
        let response = try await f.caller.send(f.customUpdate())
        #expect(response.status == 200)
        #expect(f.backend.mintedCount == 2)  // exactly one refetch
        let calls = f.fleet.calls
        #expect(calls.count == 2)  // exactly one resend
        #expect(calls.map(\.status) == [401, 200])
        #expect(calls[0].tokenFingerprint == first.fingerprint)
        #expect(calls[1].tokenFingerprint != first.fingerprint)
        #expect(
            f.provider.engine.cachedToken(for: VanContext(vehicleID: "v-42").scope)?.fingerprint
                == calls[1].tokenFingerprint)
    }

    @Test func aTokenRefusedTwiceEndsInATokenFaultNamingTheCall() async throws {
        let f = try CallerFixture()
        f.fleet.rejectNext([401, 401])
        do {
            _ = try await f.caller.send(f.customUpdate())
            Issue.record("expected a token fault")
        } catch {
            #expect(error.fault == .token && error.status == 401)
            #expect(error.message.contains("refused a freshly fetched token too"), "\(error.message)")
            #expect(error.message.contains("PUT /v1/providers/demo-project/vehicles/v-42"))
            #expect(!error.message.contains("updateMask"))
        }
        #expect(f.fleet.calls.count == 2 && f.backend.mintedCount == 2)
    }

    @Test func aForbiddenAnswerToAJustMintedTokenIsNotRepeated() async throws {
        let f = try CallerFixture()
        f.fleet.rejectNext([403])
        do {
            _ = try await f.caller.send(f.customUpdate())
            Issue.record("expected a token fault")
        } catch {
            #expect(error.fault == .token && error.status == 403)
            #expect(error.message.hasPrefix("The fleet service refused a token minted 0 s ago"), "\(error.message)")
        }
        #expect(f.fleet.calls.count == 1 && f.backend.mintedCount == 1)
    }

    @Test func anErrorStatusIsAServiceFaultWithItsStatus() async throws {
        let f = try CallerFixture()
        let request = TransportRequest(
            method: "GET", url: URL(string: "https://fleet.example.com/v1/providers/demo-project/unknown/x")!)
        do {
            _ = try await f.caller.send(request)
            Issue.record("expected a service fault")
        } catch {
            #expect(error.fault == .service && error.status == 404)
            #expect(error.message.contains("GET /v1/providers/demo-project/unknown/x"))
        }
    }

    @Test(arguments: ["http://fleet.example.com", "ftp://fleet.example.com"])
    func aURLThatWouldLeakTheTokenIsRefusedBeforeAnyFetch(host: String) async throws {
        let f = try CallerFixture()
        do {
            _ = try await f.caller.send(f.customUpdate(host: host))
            Issue.record("expected a caller fault")
        } catch {
            #expect(error.fault == .caller)
            #expect(error.message.contains("Nothing was sent"), "\(error.message)")
        }
        #expect(f.backend.mintedCount == 0 && f.transport.requestCount == 0)
    }

    @Test func theAppsOwnAuthorizationHeaderIsReplacedNotDoubled() async throws {
        let f = try CallerFixture()
        var request = f.customUpdate()
        request.headers["authorization"] = "Basic c3RhbGU="
        let seen = HeaderLog()
        f.transport.setFaultInjector { request, _ in
            seen.record(request.headers.keys.filter { $0.lowercased() == "authorization" }.count)
            return nil
        }
        _ = try await f.caller.send(request)
        #expect(seen.counts.last == 1)
        #expect(f.fleet.calls.last?.status == 200)
    }

    @Test func eachCallSendsItsOwnHeadersWithTheTokenWhateverTheCallBeforeSent() async throws {
        let f = try CallerFixture()
        let caller = f.caller
        var tagged = f.customUpdate()
        tagged.headers["X-Trace"] = "t-1"
        var retagged = tagged
        retagged.headers["X-Trace"] = "t-2"
        for request in [f.customUpdate(), tagged, tagged, retagged, f.customUpdate()] {
            _ = try await caller.send(request)
        }
        let token = try #require(f.backend.issuedTokens.last)
        let sent = f.transport.requests.filter { $0.url.path.contains("/vehicles/") }.map(\.headers)
        let plain = ["Content-Type": "application/json", "Authorization": "Bearer \(token)"]
        let traced = plain.merging(["X-Trace": "t-1"]) { $1 }
        #expect(sent == [plain, traced, traced, plain.merging(["X-Trace": "t-2"]) { $1 }, plain])
        #expect(f.backend.mintedCount == 1)
    }

    @Test func headersThatDifferOnlyInTheirBytesAreEachSentAsGiven() async throws {
        let f = try CallerFixture()
        let caller = f.caller
        // The same text to Swift's `==` (é composed, then decomposed), other bytes on the wire.
        for trace in ["caf\u{E9}", "cafe\u{301}", "caf\u{E9}"] {
            var request = f.customUpdate()
            request.headers["X-Trace"] = trace
            _ = try await caller.send(request)
        }
        let sent = f.transport.requests.filter { $0.url.path.contains("/vehicles/") }
            .map { $0.headers["X-Trace"].map { Array($0.utf8) } }
        #expect(sent == ["caf\u{E9}", "cafe\u{301}", "caf\u{E9}"].map { Array($0.utf8) })
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theWrappingTransportAuthorizesEveryRequestAndReturnsEveryStatus() async throws {
        let f = try CallerFixture()
        let transport = AuthorizingTransport(
            base: f.transport, context: VanContext(vehicleID: "v-42"), authorization: f.provider)
        // A rejected token is replaced and the request resent, as for the caller.
        f.fleet.rejectNext([401])
        let accepted = try await transport.send(f.customUpdate())
        #expect(accepted.status == 200 && f.fleet.calls.count == 2 && f.backend.mintedCount == 2)
        // Another status is the answer, not an error: the client above judges it.
        let missing = try await transport.send(
            TransportRequest(url: URL(string: "https://fleet.example.com/v1/providers/demo-project/unknown/x")!))
        #expect(missing.status == 404)
        // A token that cannot be had is a FleetServiceError.
        f.transport.setFaultInjector { request, _ in request.url.path == "/driver-token" ? .status(400) : nil }
        f.provider.invalidateAll()
        // Refused at once (a 400 is not retried): a send that waits for the clock fails here.
        let update = f.customUpdate()
        let refused = await f.clock.runToCompletion(horizon: 0) { try await transport.send(update) }
        #expect(throws: FleetServiceError.self) { try refused.get() }
    }

    /// The wrapping transport throws each failure as the fleet service error that names it,
    /// as the caller does: the token's, the network's, the caller's.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theWrappingTransportThrowsTheFaultThatNamesEachFailure() async throws {
        let f = try CallerFixture()
        let transport = AuthorizingTransport(
            base: f.transport, context: VanContext(vehicleID: "v-42"), authorization: f.provider)
        // Plain http to a host other than loopback: refused before a token is fetched.
        do {
            _ = try await transport.send(f.customUpdate(host: "http://fleet.example.com"))
            Issue.record("expected a caller fault")
        } catch let error as FleetServiceError {
            #expect(error.fault == .caller)
            #expect(error.message.contains("plain http to fleet.example.com"))
        }
        #expect(f.transport.requestCount == 0)
        // No answer from the fleet service: a network fault naming the call.
        _ = try await f.provider.token(for: VanContext(vehicleID: "v-42"))
        f.transport.inject([.connectionFailure])
        do {
            _ = try await transport.send(f.customUpdate())
            Issue.record("expected a network fault")
        } catch let error as FleetServiceError {
            #expect(error.fault == .network)
            let call = "PUT /v1/providers/demo-project/vehicles/v-42"
            #expect(error.message.hasPrefix("\(call) to the fleet service got no answer"))
            #expect(error.underlyingError is URLError)
        }
        // No token to be had: a token fault naming the token URL.
        f.transport.setFaultInjector { request, _ in request.url.path == "/driver-token" ? .status(400) : nil }
        f.provider.invalidateAll()
        let update = f.customUpdate()
        let refused = await f.clock.runToCompletion(horizon: 0) { try await transport.send(update) }
        do {
            _ = try refused.get()
            Issue.record("expected a token fault")
        } catch let error as FleetServiceError {
            #expect(error.fault == .token)
            #expect(error.message.hasPrefix("No token could be fetched for vehicle v-42 (token URL "))
        }
    }

    @Test func performRunsAMiddlewareStepWithTheHeaderAndResendsOnceAfterARejection() async throws {
        let f = try CallerFixture()
        f.fleet.rejectNext([401])
        let headers = HeaderLog()
        // The shape of a client middleware's `next`: the app's request with a header added.
        let next: (String) async throws -> TransportResponse = { authorization in
            headers.record(authorization.hasPrefix("Bearer ") ? 1 : 0)
            var request = f.customUpdate()
            request.headers["Authorization"] = authorization
            return try await f.transport.send(request)
        }
        let response = try await f.caller.perform(next, status: \.status)
        #expect(response.status == 200)
        #expect(headers.counts == [1, 1])
        #expect(f.fleet.calls.map(\.status) == [401, 200])
    }

    @Test func performPassesTheStepsOwnErrorsThroughUnchanged() async throws {
        struct DecodingFailed: Error {}
        let f = try CallerFixture()
        await #expect(throws: DecodingFailed.self) {
            try await f.caller.perform({ _ -> Int in throw DecodingFailed() }, status: { $0 })
        }
    }
}

/// Numbers recorded from any thread.
final class HeaderLog: @unchecked Sendable {
    // Safe because `items` is only touched while `lock` is held.
    private let lock = NSLock()
    private var items: [Int] = []
    func record(_ value: Int) { lock.withLock { items.append(value) } }
    var counts: [Int] { lock.withLock { items } }
}
