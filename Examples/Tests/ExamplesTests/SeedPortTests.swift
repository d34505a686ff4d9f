import FleetAuthConsumer
import FleetAuthDriver
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
}
