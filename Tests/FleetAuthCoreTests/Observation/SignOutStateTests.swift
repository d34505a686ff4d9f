import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// After `invalidateAll()` every reader sees `signedOut` until the app asks for a token again.
@Suite("Sign-out is a state", .timeLimit(.minutes(10)))
struct SignOutStateTests {
    let truck = TruckContext(vehicleID: "v-42")
    let other = TruckContext(vehicleID: "v-7")

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func everyScopeStandsSignedOutAtAMomentAfterSignOut() async throws {
        let h = try ProviderHarness()
        _ = try await h.provider.token(for: truck)
        h.provider.invalidateAll()
        #expect(h.provider.tokenState(for: truck).phase == .signedOut)
        // A context the provider never served is signed out too: the app is.
        #expect(h.provider.tokenState(for: other).phase == .signedOut)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aStreamOpenedAfterSignOutStartsWithSignedOut() async throws {
        let h = try ProviderHarness()
        _ = try await h.provider.token(for: truck)
        h.provider.invalidateAll()
        let watcher = h.watch(h.provider.tokenStates(for: truck))
        #expect(try await watcher.phases(count: 1) == ["signedOut"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aStreamOfAContextNeverServedHearsTheSignOut() async throws {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates(for: other))
        _ = try await h.provider.token(for: truck)
        h.provider.invalidateAll()
        #expect(try await watcher.phases(count: 2) == ["noToken", "signedOut"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func askingForATokenEndsTheSignOutForEveryReader() async throws {
        let h = try ProviderHarness()
        _ = try await h.provider.token(for: truck)
        h.provider.invalidateAll()
        let truckWatcher = h.watch(h.provider.tokenStates(for: truck))
        let otherWatcher = h.watch(h.provider.tokenStates(for: other))
        try await truckWatcher.phases(count: 1)
        try await otherWatcher.phases(count: 1)
        // Signed in again: the app asks for a token.
        let token = try await h.provider.token(for: truck)
        #expect(h.provider.tokenState(for: truck).phase == .fresh)
        #expect(h.provider.tokenState(for: other).phase == .noToken)
        #expect(try await truckWatcher.phases(count: 3) == ["signedOut", "refreshing", "fresh"])
        #expect(truckWatcher.states.last?.tokenFingerprint == token.fingerprint)
        #expect(try await otherWatcher.phases(count: 2) == ["signedOut", "noToken"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aLookupThatFindsNothingCachedDoesNotEndTheSignOut() async throws {
        let h = try ProviderHarness()
        _ = try await h.provider.token(for: truck)
        h.provider.invalidateAll()
        #expect(h.provider.cachedUsableToken(for: truck) == nil)
        #expect(h.provider.tokenState(for: truck).phase == .signedOut)
        #expect(h.provider.statistics.fetches == 1)
    }
}
