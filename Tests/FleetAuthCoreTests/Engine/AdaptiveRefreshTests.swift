import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Adaptive refresh window: as few fetches as the contract allows, no caller waiting", .timeLimit(.minutes(10)))
struct AdaptiveRefreshTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    struct Outcome {
        var requests = 0
        var waits = 0
        var shortestLifeHandedOut = TimeInterval.infinity
    }

    /// A caller looking up `v-42` every `interval` seconds for `hours`, with each backend
    /// answer taking `latency(n)` seconds for the n-th request.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func simulate(
        hours: Double, interval: TimeInterval = 5,
        refresh: RefreshPolicy = RefreshPolicy(refreshJitter: 0, spreadsRefreshes: false),
        latency: @escaping @Sendable (Int) -> TimeInterval
    ) async throws -> Outcome {
        let h = try EngineHarness(refresh: refresh)
        h.transport.setFaultInjector { _, index in .delay(latency(index)) }
        let start = h.clock.now()
        var outcome = Outcome()
        for step in 0..<Int(hours * 3600 / interval) {
            h.clock.advance(to: start.addingTimeInterval(Double(step) * interval))
            let engine = h.engine
            let scope = v42
            let token = try await h.clock.runToCompletion(horizon: 6) { try await engine.token(for: scope) }.get()
            outcome.shortestLifeHandedOut = min(
                outcome.shortestLifeHandedOut, token.expiresAt.timeIntervalSince(h.clock.now()))
            // A background refresh gets its answer within its latency, as on a real network
            // (the horizon covers every latency here, at most 5 s, but stays short of the
            // 15 s request timeout even after a 5 s answer).
            _ = await h.clock.runToCompletion(horizon: 6) { await engine.waitUntilIdle() }
        }
        outcome.requests = h.transport.requestCount
        outcome.waits = h.engine.statistics.waits
        return outcome
    }

    /// One token per (lifetime − 5 minutes) of the run, rounded up: the least any provider
    /// that never hands out a token with under 5 minutes left can fetch.
    func minimumRequests(hours: Double) -> Int { Int((hours * 3600 / 3300).rounded(.up)) }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFastBackendIsAskedTheMinimumNumberOfTimes() async throws {
        let outcome = try await simulate(hours: 12) { _ in 0.2 }
        #expect(outcome.requests == minimumRequests(hours: 12))
        #expect(outcome.waits == 1)  // the very first lookup only
        #expect(outcome.shortestLifeHandedOut >= 300)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aSlowBackendStillKeepsCallersOffTheNetwork() async throws {
        let outcome = try await simulate(hours: 6) { _ in 5 }
        #expect(outcome.waits == 1)
        #expect(outcome.shortestLifeHandedOut >= 300)
        #expect(outcome.requests <= minimumRequests(hours: 6) + 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aJitteryBackendStillKeepsCallersOffTheNetwork() async throws {
        // Latencies from 0.1 s to 5 s in a fixed, irregular order.
        let outcome = try await simulate(hours: 6, refresh: RefreshPolicy(spreadsRefreshes: false)) { index in
            0.1 + Double((index * 7919) % 50) / 10
        }
        #expect(outcome.waits == 1)
        #expect(outcome.shortestLifeHandedOut >= 300)
        #expect(outcome.requests <= minimumRequests(hours: 6) + 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func sparseLookupsWidenTheWindowUpToTheFullOne() async throws {
        // A lookup every 4 minutes: the window must leave a whole gap before expiring.
        let outcome = try await simulate(hours: 6, interval: 240) { _ in 0.2 }
        #expect(outcome.shortestLifeHandedOut >= 300)
        #expect(outcome.waits <= 2)  // the first lookup, and at most the first token's end
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theFullWindowIsUsedWhenAdaptationIsOff() async throws {
        let fixed = try await simulate(
            hours: 12, refresh: RefreshPolicy(adaptsToTraffic: false, spreadsRefreshes: false)
        ) { _ in 0.2 }
        // 600 s before expiry: each one-hour token serves 50 minutes.
        #expect(fixed.requests == Int((12 * 3600 / 3000.0).rounded(.up)))
        #expect(fixed.waits == 1)
    }

    @Test func theAllowanceCountsLatencyRetryAndJitter() {
        let policy = RefreshPolicy(latencyMultiplier: 3, refreshJitter: 2, outageTolerance: 0)
        let retry = RetryPolicy(initialBackoff: 0.5, maximumBackoff: 8, jitter: 0.2)
        let calm: TimeInterval = policy.adaptiveAllowance(slowestFetch: 1, retry: retry, randomUnit: 0)
        let jittered: TimeInterval = policy.adaptiveAllowance(slowestFetch: 1, retry: retry, randomUnit: 1)
        let oneAttempt: TimeInterval = policy.adaptiveAllowance(slowestFetch: 1, retry: .none, randomUnit: 0)
        let fixed: TimeInterval = RefreshPolicy(adaptsToTraffic: false).adaptiveAllowance(
            slowestFetch: 1, retry: retry, randomUnit: 0)
        #expect(abs(calm - 4.6) < 1e-9)  // 3 × 1 s, one retry (0.5 s × 1.2 + 1 s)
        #expect(abs(jittered - 6.6) < 1e-9)
        #expect(oneAttempt == 3)
        #expect(fixed == .infinity)
        // Riding out an outage leaves room for two of the longest waits between retries.
        let riding: TimeInterval = RefreshPolicy(latencyMultiplier: 3, refreshJitter: 2).adaptiveAllowance(
            slowestFetch: 1, retry: retry, randomUnit: 0)
        #expect(abs(riding - 24.2) < 1e-9)  // 3 × 1 s, 2 × (8 s × 1.2 + 1 s)
    }
}
