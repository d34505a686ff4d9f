import FleetAuthDriver
import FleetAuthTestSupport
import Foundation
import Testing

@testable import SeedPort

/// The platform's sample provider, ported by renaming plus a lock, compiles in Swift 6 mode
/// and keeps the contract over real HTTP.
@Suite("The seed's provider, ported")
struct SeedPortTests {
    @Test func thePortFetchesAndCachesOverHTTP() async throws {
        let server = try LoopbackServer.running()
        let url = try #require(URL(string: server.url("/token/swift-sample?vehicleId=v-1")))
        let provider = SampleAccessTokenProvider(providerURL: url)
        let context = DriverAuthorizationContext(vehicleID: "v-1")
        let first = try await provider.fetchToken(with: context)
        let second = try await provider.fetchToken(with: context)
        #expect(first == second)  // served from its (now locked) cache
        await #expect(throws: SampleAccessTokenProvider.AccessTokenError.self) {
            _ = try await provider.fetchToken(with: nil)
        }
    }
}
