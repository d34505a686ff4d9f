import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// What an app's metrics read off an event, as typed fields: how long, which token, when the
/// next attempt comes.
@Suite("Token event fields", .timeLimit(.minutes(10)))
struct TokenEventFieldsTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aRetriedThenSucceededFetchCarriesItsDurationsFingerprintAndRetryDelay() async throws {
        let h = try EngineHarness(latency: 0.25, retry: RetryPolicy(initialBackoff: 2, jitter: 0))
        h.transport.inject([.status(503)])
        let v42 = AuthorizationScope.vehicle("v-42")
        let token = try await h.clock.runToCompletion { [engine = h.engine] in try await engine.token(for: v42) }.get()
        _ = h.engine.cachedUsableToken(for: v42)
        let events = h.events.all
        let retried = try #require(events.first { $0.kind == .fetchRetried })
        #expect(retried.retryDelay == 2 && retried.duration == 0.25 && retried.tokenFingerprint == nil)
        let succeeded = try #require(events.first { $0.kind == .fetchSucceeded })
        #expect(succeeded.tokenFingerprint == token.fingerprint)
        #expect(succeeded.duration == 0.25 + 2 + 0.25 && succeeded.retryDelay == nil)
        let served = try #require(events.first { $0.kind == .servedFresh })
        #expect(served.tokenFingerprint == token.fingerprint && served.duration == nil)
        // Requests sent and their outcomes balance.
        let started = events.filter { $0.kind == .fetchStarted }.count
        let outcomes = events.filter { [.fetchSucceeded, .fetchRetried, .fetchFailed, .rejected].contains($0.kind) }
        #expect(started == 2 && outcomes.count == started)
    }
}
