import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// A setting no accepted token can satisfy is refused when the provider is made, naming the
/// setting and the bound.
@Suite("Settings that cannot hold are refused", .timeLimit(.minutes(10)))
struct ImpossibleSettingsTests {
    func provider(_ refresh: RefreshPolicy) throws(FleetAuthError) -> TokenProvider<TruckContext> {
        try TokenProvider<TruckContext>(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: InMemoryTransport(),
            refresh: refresh)
    }

    func refusal(_ refresh: RefreshPolicy) -> FleetAuthError? {
        do {
            _ = try provider(refresh)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        RefreshPolicy(minimumRemainingLifetime: 2600, refreshWindow: 3000),
        RefreshPolicy(minimumRemainingLifetime: 100_000, refreshWindow: 100_000),
        RefreshPolicy(minimumRemainingLifetime: 100_000),
        RefreshPolicy(minimumRemainingLifetime: 900.5, refreshWindow: 1000),
    ])
    func aMinimumRemainingLifetimeNoTokenKeepsIsRefusedNamingTheBound(refresh: RefreshPolicy) throws {
        let error = try #require(refusal(refresh))
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("`minimumRemainingLifetime`"), "\(error.message)")
        #expect(error.message.contains("at most 900 s"), "\(error.message)")
    }

    @Test func theBoundItselfAndLongerLifetimesAreAccepted() throws {
        _ = try provider(RefreshPolicy(minimumRemainingLifetime: 900, refreshWindow: 1000))
        _ = try provider(RefreshPolicy(minimumRemainingLifetime: 1800, refreshWindow: 2000, maximumLifetime: 7200))
        #expect(
            refusal(RefreshPolicy(minimumRemainingLifetime: 1801, refreshWindow: 2000, maximumLifetime: 7200))?
                .message.contains("at most 1800 s") == true)
    }

    @Test(arguments: [
        (RefreshPolicy(minimumRemainingLifetime: 700, refreshWindow: 600), "`refreshWindow` (600 s)"),
        (RefreshPolicy(maximumLifetime: 10, minimumLifetime: 20), "`maximumLifetime` (10 s)"),
        (RefreshPolicy(outageFloor: 400), "`outageFloor` (400 s)"),
        (RefreshPolicy(refreshJitter: .nan), "`refreshJitter`"),
        (RefreshPolicy(outageTolerance: -1), "`outageTolerance`"),
    ])
    func eachRefusalNamesItsSetting(refresh: RefreshPolicy, named: String) throws {
        let error = try #require(refusal(refresh))
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains(named), "\(error.message)")
    }
}
