import FleetAuthConsumer
import FleetAuthDriver
import FleetAuthURLSession
import Foundation
import Testing

@testable import SeedPort

/// The platform's sample provider, ported by renaming plus a lock, compiles in Swift 6 mode
/// and keeps the contract over real HTTP.
@Suite("The seed's provider, ported", .timeLimit(.minutes(10)))
struct SeedPortTests {
    @Test func thePortFetchesAndCachesOverHTTP() async throws {
        let server = try LoopbackFixture.shared.get()
        let url = try #require(URL(string: server.baseURL + "/token/swift-sample?vehicleId=v-1"))
        let provider = SampleAccessTokenProvider(providerURL: url)
        let context = DriverAuthorizationContext(vehicleID: "v-1")
        let first = try await provider.fetchToken(with: context)
        let second = try await provider.fetchToken(with: context)
        #expect(first == second)  // served from its (now locked) cache
        // The SDK's completion form is the one that may get no context.
        let error: (any Error)? = await withCheckedContinuation { done in
            provider.fetchToken(with: nil) { _, error in done.resume(returning: error) }
        }
        #expect(error is SampleAccessTokenProvider.AccessTokenError)
    }

    @Test func theCommandLineNeedsATokenURLAndRefusesWhatItDoesNotKnow() throws {
        let invocation = try SeedPort.Invocation(["--token-url", "http://127.0.0.1:8080/token", "--vehicle-id", "v-7"])
        #expect(invocation.tokenURL?.absoluteString == "http://127.0.0.1:8080/token" && invocation.vehicleID == "v-7")
        #expect(try SeedPort.Invocation(["--help"]).help)
        let bad: [([String], String)] = [
            ([], "--token-url URL is required"),
            (["--bogus"], "unknown option --bogus"),
            (["stray"], "unexpected argument stray"),
            (["--token-url"], "--token-url needs a value"),
            (["--token-url", "not a url"], "--token-url needs an http or https URL, not not a url"),
            (["--token-url", "ftp://host/token"], "--token-url needs an http or https URL, not ftp://host/token"),
        ]
        for (arguments, message) in bad {
            #expect(throws: SeedPort.UsageError(message: message), "\(arguments)") {
                _ = try SeedPort.Invocation(arguments)
            }
        }
    }
}

/// The platform's consumer sample, ported by renaming plus a lock, keeps the contract over real
/// HTTP with a trip context whose trip ID is a `String`.
@Suite("The seed's consumer provider, ported", .timeLimit(.minutes(10)))
struct ConsumerSamplePortTests {
    @Test func thePortFetchesAndCachesOverHTTP() async throws {
        let server = try LoopbackFixture.shared.get()
        let url = try #require(URL(string: server.baseURL + "/token/swift-sample?vehicleId=t-1"))
        let provider = ConsumerSample.SampleAccessTokenProvider(providerURL: url)
        let context = TripAuthorizationContext(tripID: "t-1")
        let first = try await provider.fetchToken(with: context)
        let second = try await provider.fetchToken(with: context)
        #expect(first == second)  // served from its (now locked) cache
        let error: (any Error)? = await withCheckedContinuation { done in
            provider.fetchToken(with: nil) { _, error in done.resume(returning: error) }
        }
        #expect(error is ConsumerSample.SampleAccessTokenProvider.AccessTokenError)
    }

    /// The ported provider goes where a trip's token is asked for: a `TripMonitor` made with it
    /// follows a trip over real HTTP, and says what it needs for a shipment it cannot supply.
    @Test func thePortServesTheTripMonitor() async throws {
        let server = try LoopbackFixture.shared.get()
        let url = try #require(URL(string: server.baseURL + "/token/swift-sample?tripId=t-1"))
        let monitor = try TripMonitor(
            fleetService: FleetServiceEndpoint(baseURL: URL(string: server.baseURL)!, providerID: "loopback-project"),
            authorization: ConsumerSample.SampleAccessTokenProvider(providerURL: url), transport: URLSessionTransport())
        let trip = try await monitor.fetchTrip("t-1")
        #expect(trip.tripID == "t-1" && trip.status == "ENROUTE_TO_PICKUP")
        let error = try await #require(throws: FleetServiceError.self) { try await monitor.fetchTracking("s-1") }
        #expect(error.fault == .token, "\(error)")
        #expect("\(error)".contains("supplies trips' tokens only"), "\(error)")
    }

    /// FleetAuth's own provider for trip contexts is a `TripAuthorization` too, and serves the
    /// monitor the same way.
    @Test func fleetAuthsTripProviderServesTheTripMonitor() async throws {
        let server = try LoopbackFixture.shared.get()
        let provider = try TokenProvider<TripAuthorizationContext>(
            endpoint: TokenEndpoint(
                url: server.baseURL + "/token/consumer/{tripId}", format: .jwtWithExpirationTimestamp),
            transport: URLSessionTransport())
        let monitor = try TripMonitor(
            fleetService: FleetServiceEndpoint(baseURL: URL(string: server.baseURL)!, providerID: "loopback-project"),
            authorization: provider, transport: URLSessionTransport())
        #expect(try await monitor.fetchTrip("t-2").tripID == "t-2")
        #expect(provider.cachedUsableToken(for: TripAuthorizationContext(tripID: "t-2")) != nil)
    }
}
