import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// Captures every description, error message and event produced while the SDK works
/// through success, rejection, failure and hostile answers, and proves that no token value
/// (nor its payload or signature part) appears in any of them.
@Suite("Security: no token value in any output", .timeLimit(.minutes(10)))
struct RedactionAuditTests {
    /// Every string the SDK hands to an app for logging or display.
    final class Capture: Sendable {
        private let state = LockedState<[String]>([])
        func add(_ text: String) { state.withLock { $0.append(text) } }
        func add(_ error: any Error) {
            add(String(describing: error))
            add(String(reflecting: error))
            add(error.localizedDescription)
            if let error = error as? FleetAuthError {
                add((String(reflecting: error) + String(describing: error.underlyingError)))
            }
            if let error = error as? FleetServiceError, let underlying = error.underlyingError { add(underlying) }
        }
        func add(_ token: AuthToken) {
            add(token.description)
            add(String(reflecting: token))
            var dumped = ""
            dump(token, to: &dumped)
            add(dumped)
        }
        var all: [String] { state.withLock { $0 } }
    }

    /// Records the description of every request it forwards (these carry bearer tokens).
    struct DescribingTransport: HTTPTransport {
        let base: any HTTPTransport
        let capture: Capture
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            capture.add(request.description)
            var dumped = ""
            dump(request, to: &dumped)
            capture.add(dumped)
            let response = try await base.send(request)
            capture.add(response.description)
            return response
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func noTokenValueReachesAnyOutput() async throws {
        let capture = Capture()
        let clock = ManualWallClock()
        let backend = InMemoryTokenBackend(clock: clock)
        let fleet = InMemoryFleetService(clock: clock)
        let inner = InMemoryTransport(clock: clock)
        inner.mount(backend, at: "/token")
        inner.mount(fleet)
        let transport = DescribingTransport(base: inner, capture: capture)
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
            retry: RetryPolicy(maximumAttempts: 1, failureCooldown: 0), observer: { capture.add($0.description) })
        let fleetEndpoint = FleetServiceEndpoint(
            baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project")

        // Success, staleness, expiry and refresh for several vehicles.
        for step in 0..<40 {
            let context = DriverAuthorizationContext(vehicleID: "v-\(step % 4)")
            capture.add(try await provider.token(for: context))
            clock.advance(by: 300)
            _ = await clock.runToCompletion { await provider.waitUntilIdle() }
        }
        // Updates: accepted, revoked and retried, then failing in every way.
        let reporter = try VehicleReporter(
            fleetService: fleetEndpoint, vehicleID: "v-1", authorization: provider, transport: transport, clock: clock)
        let location = VehicleLocation(latitude: 1, longitude: 2, timestamp: clock.now())
        let receipt = try await reporter.report(location)
        capture.add(receipt.tokenFingerprint)
        fleet.revoke(tokenFingerprint: receipt.tokenFingerprint)
        _ = try await reporter.report(location)
        fleet.rejectNext([401, 401])
        do { _ = try await reporter.report(location) } catch { capture.add(error) }
        fleet.rejectNext([500])
        do { _ = try await reporter.report(location) } catch { capture.add(error) }
        inner.inject([.connectionFailure])
        do { _ = try await reporter.report(location) } catch { capture.add(error) }
        do { _ = try await reporter.report(VehicleLocation(latitude: 99, longitude: 0, timestamp: clock.now())) } catch
        {
            capture.add(error)
        }
        provider.invalidateAll()
        // Every hostile answer, through a provider of its own.
        for answer in HostileAnswers.all(now: clock.now()) {
            guard case .http(let status, let headers, let body) = answer.delivery else { continue }
            let hostile = InMemoryTransport(clock: clock)
            hostile.route("/token") { _ in TransportResponse(status: status, headers: headers, body: body) }
            let hostileProvider = try DriverTokenProvider(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token", format: answer.format),
                transport: DescribingTransport(base: hostile, capture: capture), clock: clock, retry: .none,
                observer: { capture.add($0.description) })
            do {
                // One attempt, answered at once: a fetch that waits for the clock fails the test.
                _ = try await clock.atOnce {
                    try await hostileProvider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-42"))
                }
            } catch let stalled as ManualWallClock.Stalled {
                Issue.record("\(answer.name): \(stalled)")
            } catch {
                capture.add(error)
            }
        }

        let secrets = backend.issuedTokens
        #expect(secrets.count >= 10)
        let outputs = capture.all
        #expect(outputs.count > 200)
        for secret in secrets {
            let parts = secret.split(separator: ".").dropFirst().map(String.init) + [secret]
            for output in outputs {
                for part in parts where output.contains(part) {
                    Issue.record("a token part leaked into: \(output.prefix(80))…")
                }
            }
        }
    }

    @Test func dumpingARequestShowsNoHeaderValueOrBody() {
        let secret = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.c2lnbmF0dXJl"
        let request = TransportRequest(
            method: "PUT", url: URL(string: "https://fleet.example.com/v1/providers/p/vehicles/v-1")!,
            headers: ["Authorization": "Bearer \(secret)"], body: Data("{\"token\":\"\(secret)\"}".utf8))
        var dumped = ""
        dump(request, to: &dumped)
        #expect(!dumped.contains("c2VjcmV0LXBheWxvYWQ") && !dumped.contains("Bearer"))
        #expect(dumped.contains("Authorization") && dumped.contains("bodyBytes"))
    }

    @Test func dumpingAProviderOrABackendShowsNoTokenItHolds() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let backend = InMemoryTokenBackend(clock: clock)
        transport.mount(backend, at: "/token")
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock)
        let context = DriverAuthorizationContext(vehicleID: "v-1")
        let token = try await provider.fetchToken(with: context)
        provider.invalidate(token, for: context)  // now also in the rejected list
        _ = try? await provider.fetchToken(with: context)
        for subject in [provider as Any, backend, transport] {
            var dumped = ""
            dump(subject, to: &dumped, maxDepth: 12)
            for part in token.split(separator: ".") { #expect(!dumped.contains(part)) }
        }
    }

    /// A reporter makes each update's headers anew and keeps none: `dump`, deep enough to show
    /// its vehicle and fleet service, shows nothing of the token its update carried.
    @Test func dumpingAReporterShowsNoTokenItsUpdatesCarried() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let backend = InMemoryTokenBackend(clock: clock)
        transport.mount(backend, at: "/token")
        transport.mount(InMemoryFleetService(clock: clock))
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock)
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
            vehicleID: "v-1", authorization: provider, transport: transport, clock: clock)
        let receipt = try await reporter.report(VehicleLocation(latitude: 1, longitude: 2, timestamp: clock.now()))
        let token = try #require(backend.issuedTokens.last)
        var dumped = ""
        dump(reporter, to: &dumped, maxDepth: 12)
        for part in token.split(separator: ".") { #expect(!dumped.contains(part), "\(dumped)") }
        #expect(dumped.contains("v-1") && dumped.contains("demo-project"), "\(dumped)")
        #expect(!dumped.contains(receipt.tokenFingerprint), "\(dumped)")
    }

    /// A token URL may carry an API key in its query, or user info: `print`, `dump` and
    /// mirrors of an endpoint show neither, and keep the placeholders.
    @Test func printingAnEndpointShowsNoQueryValueOrUserInfo() {
        let endpoint = TokenEndpoint(
            url: "https://user:pa55@api.example.com/token/{vehicleId}?key=SECRET&region=eu#frag")
        var dumped = ""
        dump(endpoint, to: &dumped)
        for text in [String(describing: endpoint), String(reflecting: endpoint), dumped] {
            for secret in ["SECRET", "pa55", "user", "frag", "eu"] { #expect(!text.contains(secret), "\(text)") }
            #expect(text.contains("https://api.example.com/token/{vehicleId}?key=hidden&region=hidden"), "\(text)")
        }
        // A password holding `/`, `#` or `?`-free oddities, and a query item without a value.
        for url in ["https://key:ab/cd#ef@api.example.com/t?s3cr3t", "https://key:ab@cd@api.example.com/t?s3cr3t&x=1"] {
            let shown = String(describing: TokenEndpoint(url: url))
            for secret in ["key", "ab", "cd", "ef", "s3cr3t", "=1"] { #expect(!shown.contains(secret), "\(shown)") }
            #expect(shown.contains("api.example.com/t?"), "\(shown)")
        }
        // Errors show a URL by the same rule: a bare query item may be a key too.
        let error = FleetAuthError(
            reason: .transportFailure, message: "No answer.",
            url: URL(string: "https://user:pa55@api.example.com/t?s3cr3t&vehicleId=v-1#frag"))
        for text in [error.description, String(reflecting: error)] {
            for secret in ["s3cr3t", "pa55", "v-1", "frag"] { #expect(!text.contains(secret), "\(text)") }
            #expect(text.contains("https://api.example.com/t?=hidden&vehicleId=hidden"), "\(text)")
        }
    }
}
