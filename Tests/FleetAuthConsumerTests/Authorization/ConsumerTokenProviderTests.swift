import FleetAuthConsumer
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Consumer token provider", .timeLimit(.minutes(10)))
struct ConsumerTokenProviderTests {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let backend: InMemoryTokenBackend
    let provider: ConsumerTokenProvider

    init() throws {
        transport = InMemoryTransport(clock: clock)
        backend = InMemoryTokenBackend(clock: clock, configuration: .init(format: .tokenWithExpiresInSeconds))
        transport.mount(backend, at: "/trip-token")
        provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/trip-token", format: .tokenWithExpiresInSeconds),
            transport: transport, clock: clock)
    }

    @Test func requestNamesTheTripAndTheTokenCoversIt() async throws {
        let token = try await provider.fetchToken(with: ConsumerAuthorizationContext(tripID: "t-7"))
        #expect(try JWTDecoder.decode(token).covers(.trip("t-7")))
        #expect(transport.requests.first?.url.query == "tripId=t-7")
    }

    @Test func followingSeveralTripsKeepsOneTokenEach() async throws {
        let trips = ["t-1", "t-2", "t-3"].map(ConsumerAuthorizationContext.init)
        var tokens: [String: String] = [:]
        for _ in 0..<4 {
            for trip in trips {
                let token = AuthToken.fingerprint(of: try await provider.fetchToken(with: trip))
                #expect(tokens[trip.description] == nil || tokens[trip.description] == token)
                tokens[trip.description] = token
            }
        }
        #expect(Set(tokens.values).count == 3)
        #expect(transport.requestCount == 3)
    }

    @Test func nilContextCompletesWithMissingContext() async {
        let error: FleetAuthError? = await withCheckedContinuation { continuation in
            provider.fetchToken(with: nil) { _, error in continuation.resume(returning: error as? FleetAuthError) }
        }
        #expect(error?.reason == .missingContext)
        #expect(error?.message.contains("ConsumerAuthorizationContext") == true)
    }

    @Test func tokenForAnotherTripIsRefused() async throws {
        transport.route("/trip-token") { _ in
            try await self.backend.respond(
                to: TransportRequest(url: URL(string: "https://b.example/t?tripId=t-other")!))
        }
        do {
            _ = try await provider.fetchToken(with: ConsumerAuthorizationContext(tripID: "t-7"))
            Issue.record("expected scopeMismatch")
        } catch {
            #expect((error as? FleetAuthError)?.reason == .scopeMismatch)
        }
    }

    @Test func expiryFromTheBodyIsCheckedAgainstTheJWT() async throws {
        backend.configuration.format = .objectiveCSample()  // relative seconds, read as such
        let consistent = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/trip-token", format: .objectiveCSample()),
            transport: transport, clock: clock)
        _ = try await consistent.fetchToken(with: ConsumerAuthorizationContext(tripID: "t-1"))
        let confused = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/trip-token", format: .swiftSample()),
            transport: transport, clock: clock, retry: .none)
        await #expect(throws: FleetAuthError.self) {
            _ = try await confused.fetchToken(with: ConsumerAuthorizationContext(tripID: "t-1"))
        }
    }
}
