import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// The engine's margins at their exact edge: each test holds both sides of one boundary, on
/// a manual clock that moves only when told to.
@Suite("Token engine: each margin to the second", .timeLimit(.minutes(10)))
struct EngineBoundaryTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    /// One attempt per fetch, a backoff that ends past the outage floor (so no background
    /// retry outlives the test's step) and no cooldown.
    static let oneAttempt = RetryPolicy(maximumAttempts: 1, initialBackoff: 2, jitter: 0, failureCooldown: 0)

    /// An engine with the full refresh window and no spread, its first token fetched, and a
    /// backend that answers 503 from now on.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func engineInAnOutage() async throws -> (EngineHarness, AuthToken) {
        let h = try EngineHarness(
            refresh: RefreshPolicy(adaptsToTraffic: false, spreadsRefreshes: false), retry: Self.oneAttempt)
        let token = try await h.engine.token(for: v42)
        h.transport.setFaultInjector { _, _ in .status(503) }
        return (h, token)
    }

    /// Moves the clock to where `token` has `left` seconds of life.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func advance(_ h: EngineHarness, until token: AuthToken, has left: TimeInterval) {
        h.clock.advance(by: token.expiresAt.timeIntervalSince(h.clock.now()) - left)
    }

    /// A caller that waits for a fetch the backend fails (503) gets the cached token degraded
    /// while the token is above its outage floor (60 s of an hour-long token's life): with
    /// 61 s left it does; at exactly 60 s it gets the backend's error.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [(61.0, true), (60.0, false)])
    func aWaitingCallerIsServedDegradedOnlyAboveTheFloor(left: TimeInterval, served: Bool) async throws {
        let (h, token) = try await engineInAnOutage()
        advance(h, until: token, has: left)
        let result = try await h.settledResult(of: h.startFetches(1, for: v42)[0])
        if served {
            #expect(try result.get() == token)
        } else {
            #expect(throws: FleetAuthError.self) { try result.get() }
            #expect(h.engine.statistics.degradedServes == 0)
        }
        #expect(h.transport.requestCount == 2)
    }

    /// During an outage a lookup hands the cached token out degraded down to its outage floor
    /// and not at it: with 61 s left `cachedUsableToken` returns it, at exactly 60 s nothing.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aLookupServesDegradedUntilTheFloorAndNotAtIt() async throws {
        let (h, token) = try await engineInAnOutage()
        advance(h, until: token, has: 61)
        // The refresh fails: the waiting caller gets the token degraded, and the outage is noted.
        #expect(try await h.settledResult(of: h.startFetches(1, for: v42)[0]).get() == token)
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        await h.clock.settle()  // the refresh that lookup started has failed too
        #expect(h.engine.tokenState(of: v42).phase == .degraded)
        h.clock.advance(by: 1)
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
        // The state says so too: at the floor the token is no longer handed out degraded.
        #expect(h.engine.tokenState(of: v42).phase != .degraded)
    }

    /// Callers wait at most the retry deadline: a retry that would start exactly at the
    /// deadline (0.5 s + 1 s of backoff against a 1.5 s deadline) is not made, and the caller
    /// gets the last attempt's error (503) after two requests.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func noRetryStartsExactlyAtTheDeadline() async throws {
        let h = try EngineHarness(
            retry: RetryPolicy(maximumAttempts: 10, initialBackoff: 0.5, multiplier: 2, jitter: 0, deadline: 1.5))
        h.transport.setFaultInjector { _, _ in .status(503) }
        let result = await h.clock.runToCompletion { [engine = h.engine, v42] in try await engine.token(for: v42) }
        #expect(throws: FleetAuthError.self) { try result.get() }
        if case .failure(let error as FleetAuthError) = result {
            #expect(error.reason == .unexpectedStatus && error.status == 503, "\(error)")
        }
        #expect(h.transport.requestCount == 2)
        let retries = h.events.all.compactMap { event -> TimeInterval?? in
            if case .fetchFailed(_, _, _, let retryIn) = event.detail { return retryIn }
            return nil
        }
        #expect(retries == [0.5, nil])
    }

    /// After a failed refresh the scope cools down for `failureCooldown` (5 s): a stale
    /// lookup 1 s before the cooldown ends starts no refresh; one exactly at its end does.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aStaleLookupRefreshesAgainExactlyWhenTheCooldownEnds() async throws {
        let h = try EngineHarness(
            refresh: RefreshPolicy(adaptsToTraffic: false, spreadsRefreshes: false),
            retry: RetryPolicy(maximumAttempts: 1, jitter: 0, failureCooldown: 5))
        let token = try await h.engine.token(for: v42)
        h.transport.setFaultInjector { _, _ in .status(403) }
        advance(h, until: token, has: 500)  // stale: inside the 600 s refresh window
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        await h.clock.settle()  // the refresh that lookup started is refused
        #expect(h.transport.requestCount == 2)
        h.clock.advance(by: 4)
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        await h.clock.settle()
        #expect(h.transport.requestCount == 2)
        h.clock.advance(by: 1)
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        await h.clock.settle()
        #expect(h.transport.requestCount == 3)
    }

    /// The backend's clock may be off the device's by the expiry tolerance (60 s) without a
    /// warning: a `Date` header 60 s ahead raises no `clockDisagreement`, 61 s ahead does.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [(60.0, false), (61.0, true)])
    func aClockDisagreementIsReportedOnlyPastTheTolerance(ahead: TimeInterval, reported: Bool) async throws {
        let h = try EngineHarness(backend: .init(clockOffset: ahead))
        let token = try await h.engine.token(for: v42)
        #expect(try #require(token.expiresAtUptime) - h.clock.uptime() == 3600)
        #expect(h.events.count { $0.kind == .clockDisagreement } == (reported ? 1 : 0))
    }
}
