import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Token engine: failures, retries, invalidation, cancellation", .timeLimit(.minutes(10)))
struct TokenEngineFailureTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    /// Expects `task` to fail with a `FleetAuthError` and returns it; the task must have
    /// finished by the time `h`'s clock settles (a task still waiting for time fails the test
    /// here instead of hanging it).
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func failure(of task: Task<AuthToken, any Error>, in h: EngineHarness) async -> FleetAuthError? {
        let result: Result<AuthToken, any Error>
        do {
            result = try await h.settledResult(of: task)
        } catch {
            Issue.record("the fetch still waits for the clock: \(error)")
            return nil
        }
        switch result {
        case .success(let token):
            Issue.record("expected a failure, got \(token)")
            return nil
        case .failure(let error):
            #expect(error is FleetAuthError, "\(error)")
            return error as? FleetAuthError
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func transientFailuresAreRetriedWithGrowingBackoff() async throws {
        let h = try EngineHarness()
        h.transport.inject([.status(503), .connectionFailure])
        let task = await h.startFetches(1, for: v42)[0]
        try await h.clock.settledSleepers(count: 1, within: 1)
        #expect(h.clock.nextDeadline == h.clock.now().addingTimeInterval(0.5))
        h.clock.advance(by: 0.5)
        try await h.clock.settledSleepers(count: 1, within: 2)
        #expect(h.clock.nextDeadline == h.clock.now().addingTimeInterval(1.0))
        h.clock.advance(by: 1.0)
        _ = try await h.settledResult(of: task).get()
        #expect(h.transport.requestCount == 3)
        #expect(h.events.count { if case .fetchFailed = $0.detail { true } else { false } } == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func retryAfterLengthensTheWait() async throws {
        let h = try EngineHarness()
        h.transport.inject([.status(429, headers: ["Retry-After": "4"])])
        let task = await h.startFetches(1, for: v42)[0]
        try await h.clock.settledSleepers(count: 1, within: 5)
        #expect(h.clock.nextDeadline == h.clock.now().addingTimeInterval(4))
        h.clock.advance(by: 4)
        _ = try await task.value
        #expect(h.transport.requestCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func retryAfterBeyondTheDeadlineFailsAtOnce() async throws {
        let h = try EngineHarness()
        h.transport.inject([.status(503, headers: ["Retry-After": "120"])])
        let error = await failure(of: h.startFetches(1, for: v42)[0], in: h)
        #expect(error?.reason == .unexpectedStatus)
        #expect(error?.status == 503)
        #expect(h.transport.requestCount == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func attemptsAreBounded() async throws {
        let h = try EngineHarness(retry: RetryPolicy(maximumAttempts: 3, jitter: 0))
        h.transport.setFaultInjector { _, _ in .status(500) }
        let task = await h.startFetches(1, for: v42)[0]
        for _ in 0..<2 {
            try await h.clock.settledSleepers(count: 1, within: 10)
            h.clock.advance(to: try #require(h.clock.nextDeadline))
        }
        let error = await failure(of: task, in: h)
        #expect(error?.status == 500)
        #expect(h.transport.requestCount == 3)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [400, 401, 403, 404, 410])
    func clientErrorsFailFast(status: Int) async throws {
        let h = try EngineHarness()
        h.transport.inject([.status(status)])
        let error = await failure(of: h.startFetches(1, for: v42)[0], in: h)
        #expect(error?.reason == .unexpectedStatus)
        #expect(h.transport.requestCount == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func validationFailuresFailFastAndCacheNothing() async throws {
        let h = try EngineHarness(backend: .init(lifetime: 7200))
        let error = await failure(of: h.startFetches(1, for: v42)[0], in: h)
        #expect(error?.reason == .lifetimeTooLong)
        #expect(h.transport.requestCount == 1)
        #expect(h.engine.cachedToken(for: v42) == nil)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func tokenForAnotherVehicleIsRefusedAndNotCached() async throws {
        let h = try EngineHarness()
        h.transport.route("/token") { request in
            var other = request
            other.url = URL(string: "https://backend.example.com/token?vehicleId=v-99")!
            return try await h.backend.respond(to: other)
        }
        let error = await failure(of: h.startFetches(1, for: v42)[0], in: h)
        #expect(error?.reason == .scopeMismatch)
        #expect(h.engine.statistics.cachedScopes == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func allWaitersOfOneFetchGetTheSameError() async throws {
        let h = try EngineHarness(latency: 0.2, retry: .none)
        h.transport.inject([.status(502)])
        let tasks = await h.startFetches(50, for: v42)
        try await h.clock.settledSleepers(count: 1, within: 1)
        h.clock.advance(by: 0.2)
        var messages = Set<String>()
        for task in tasks { messages.insert((await failure(of: task, in: h))?.description ?? "none") }
        #expect(messages.count == 1)
        #expect(h.transport.requestCount == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func cooldownKeepsADownBackendFromARequestStorm() async throws {
        let h = try EngineHarness(retry: RetryPolicy(maximumAttempts: 1, failureCooldown: 5))
        h.transport.setFaultInjector { _, _ in .connectionFailure }
        for _ in 0..<20 {
            let error = await failure(of: h.startFetches(1, for: v42)[0], in: h)
            #expect(error?.reason == .transportFailure)
        }
        #expect(h.transport.requestCount == 1)
        // Other scopes are not held back, and service resumes after the cooldown.
        h.transport.setFaultInjector(nil)
        _ = try await h.engine.token(for: .vehicle("v-1"))
        h.clock.advance(by: 5)
        _ = try await h.engine.token(for: v42)
        #expect(h.transport.requestCount == 3)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func timeoutOnTheInjectedClock() async throws {
        let h = try EngineHarness(retry: .none, endpointTimeout: 3)
        h.transport.inject([.hang])
        let task = await h.startFetches(1, for: v42)[0]
        try await h.clock.settledSleepers(count: 2)
        h.clock.advance(by: 3)
        let error = await failure(of: task, in: h)
        #expect(error?.reason == .timedOut)
        #expect(error?.isTransient == true)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func deadlineBoundsAFetchWithRetries() async throws {
        let h = try EngineHarness(retry: RetryPolicy(maximumAttempts: 10, jitter: 0, deadline: 10), endpointTimeout: 4)
        h.transport.setFaultInjector { _, _ in .hang }
        let task = await h.startFetches(1, for: v42)[0]
        let start = h.clock.now()
        func finished() -> Bool {
            h.events.count { if case .fetchFailed(_, _, _, nil) = $0.detail { true } else { false } } > 0
        }
        while !finished(), h.clock.now().timeIntervalSince(start) < 60 {
            // The hanging request sleeps a day; advance to the timeout or backoff sleep.
            await h.clock.settle()
            if finished() { break }
            let next = try #require(h.clock.nextDeadline)
            try #require(next.timeIntervalSince(h.clock.now()) <= 10)
            h.clock.advance(to: next)
        }
        let advanced = h.clock.now().timeIntervalSince(start)
        let error = await failure(of: task, in: h)
        #expect(error?.reason == .timedOut)
        #expect(advanced <= 10.5)
        #expect(h.transport.requestCount <= 3)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func cancelledCallerLeavesTheFetchToOthers() async throws {
        let h = try EngineHarness(latency: 0.2)
        let tasks = await h.startFetches(3, for: v42)
        try await h.clock.settledSleepers(count: 1, within: 1)
        tasks[0].cancel()
        let cancelled = await tasks[0].result
        #expect(throws: CancellationError.self) { try cancelled.get() }
        h.clock.advance(by: 0.2)
        let a = try await tasks[1].value
        let b = try await tasks[2].value
        #expect(a == b)
        #expect(h.transport.requestCount == 1)
        #expect(h.engine.cachedToken(for: v42) == a)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func invalidatingTheCachedTokenForcesOneRefetch() async throws {
        let h = try EngineHarness()
        let rejected = try await h.engine.token(for: v42)
        #expect(h.engine.invalidate(rejected.value, for: v42))
        let fresh = try await h.engine.token(for: v42)
        #expect(fresh != rejected)
        #expect(h.transport.requestCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func lateRejectionOfAnOlderTokenCausesNoSecondRefetch() async throws {
        let h = try EngineHarness()
        let old = try await h.engine.token(for: v42)
        h.engine.invalidate(old.value, for: v42)
        let current = try await h.engine.token(for: v42)
        #expect(!h.engine.invalidate(old.value, for: v42))  // a second 401 for the old token
        #expect(try await h.engine.token(for: v42) == current)
        #expect(h.transport.requestCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func forcedRefetchNeverReturnsTheRejectedToken() async throws {
        let h = try EngineHarness(retry: RetryPolicy(maximumAttempts: 1, failureCooldown: 0))
        let rejected = try await h.engine.token(for: v42)
        // A backend that caches tokens hands the same one back.
        h.transport.route("/token") { _ in
            TransportResponse(status: 200, body: Data(#"{"token":"\#(rejected.value)"}"#.utf8))
        }
        h.engine.invalidate(rejected.value, for: v42)
        let error = await failure(of: h.startFetches(1, for: v42)[0], in: h)
        #expect(error?.reason == .rejectedTokenReissued)
        #expect(h.engine.cachedToken(for: v42) == nil)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func invalidateAllDropsTokensAndFailsWaiters() async throws {
        let h = try EngineHarness(latency: 0.2)
        let warm = h.clock.startSimulated { [engine = h.engine] in try await engine.token(for: .vehicle("v-1")) }
        try await h.clock.settledSleepers(count: 1, within: 1)
        h.clock.advance(by: 0.2)
        _ = try await warm.value
        let waiting = await h.startFetches(2, for: v42)
        try await h.clock.settledSleepers(count: 1, within: 1)
        h.engine.invalidateAll()
        for task in waiting { #expect((await failure(of: task, in: h))?.reason == .signedOut) }
        #expect(h.engine.statistics.cachedScopes == 0)
        // Nothing from before sign-out is cached later either.
        h.clock.advance(by: 0.2)
        let next = h.clock.startSimulated { [engine = h.engine, v42] in try await engine.token(for: v42) }
        try await h.clock.settledSleepers(count: 1, within: 1)
        h.clock.advance(by: 0.2)
        _ = try await next.value
        #expect(h.engine.statistics.cachedScopes == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: ["", " v-1", "v-1\n", String(repeating: "x", count: 300)])
    func invalidContextIsATypedErrorWithoutARequest(id: String) async throws {
        let h = try EngineHarness()
        await #expect(throws: FleetAuthError.self) { try await h.engine.token(for: .vehicle(id)) }
        #expect(h.transport.requestCount == 0)
    }

    @Test func headerProviderFailureIsTypedAndSendsNothing() async throws {
        struct NotSignedIn: Error {}
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://b.example/token", headers: { _ in throw NotSignedIn() }),
                transport: transport, clock: clock, retry: .none))
        do {
            _ = try await engine.token(for: .vehicle("v-1"))
            Issue.record("expected credentialsUnavailable")
        } catch let error as FleetAuthError {
            #expect(error.reason == .credentialsUnavailable)
            #expect(error.underlyingError is NotSignedIn)
        }
        #expect(transport.requestCount == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aHeaderProviderThatNeverReturnsEndsAtTheTimeoutAndSendsNothing() async throws {
        // The endpoint's timeout bounds the app's headers closure too: a closure stuck on its
        // own network cannot hold the provider's callers past their deadline.
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(
                    url: "https://b.example/token",
                    headers: { _ in
                        try await clock.sleep(for: 86_400)
                        return ["Authorization": "Bearer late"]
                    }, timeout: 5),
                transport: transport, clock: clock, retry: .none))
        let started = clock.uptime()
        let result = await clock.runToCompletion(horizon: 10) { try await engine.token(for: .vehicle("v-1")) }
        guard case .failure(let error as FleetAuthError) = result else {
            Issue.record("expected credentialsUnavailable, got \(result)")
            return
        }
        #expect(error.reason == .credentialsUnavailable)
        #expect(error.message.hasPrefix("The header provider did not return within 5.0 s, so no request was sent"))
        #expect(clock.uptime() - started == 5)
        #expect(transport.requestCount == 0)
    }

    @Test func badPoliciesAreRejectedAtConstruction() {
        let endpoint = TokenEndpoint(url: "https://b.example/token")
        let transport = InMemoryTransport()
        #expect(throws: FleetAuthError.self) {
            try TokenEngine(
                configuration: .init(endpoint: endpoint, transport: transport, retry: RetryPolicy(maximumAttempts: 0)))
        }
        #expect(throws: FleetAuthError.self) {
            try TokenEngine(
                configuration: .init(
                    endpoint: endpoint, transport: transport, refresh: RefreshPolicy(refreshWindow: 10)))
        }
        #expect(throws: FleetAuthError.self) {
            try TokenEngine(configuration: .init(endpoint: endpoint, transport: transport, cacheCapacity: 0))
        }
    }
}

@Suite("Token engine: flight slot ownership", .timeLimit(.minutes(10)))
struct FlightSlotTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aDiscardedFlightNeverClearsItsSuccessorsSlot() async throws {
        let h = try EngineHarness(latency: 1)
        let scope = AuthorizationScope.vehicle("v-1")
        let old = await h.startFetches(1, for: scope)[0]
        try await h.clock.settledSleepers(count: 1, within: 2)
        h.engine.invalidateAll()  // cancels the first flight
        _ = await old.result
        let successors = await h.startFetches(5, for: scope)
        try await h.clock.settledSleepers(count: 1, within: 2)
        h.clock.advance(by: 1)
        var fingerprints = Set<String>()
        for task in successors { fingerprints.insert(try await task.value.fingerprint) }
        #expect(fingerprints.count == 1)
        #expect(h.transport.requestCount == 2)
    }
}

@Suite("Token engine: every failure is observable", .timeLimit(.minutes(10)))
struct FailureReplayEventTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFailureReplayedDuringTheCooldownEmitsAnEvent() async throws {
        let h = try EngineHarness(retry: RetryPolicy(maximumAttempts: 1, failureCooldown: 5))
        h.transport.inject([.status(503)])
        for _ in 0..<2 {
            // One attempt, refused at once; then the cooldown replays it without a request.
            await #expect(throws: FleetAuthError.self) {
                _ = try await h.clock.atOnce { [engine = h.engine] in try await engine.token(for: .vehicle("v-42")) }
            }
        }
        #expect(h.transport.requestCount == 1)
        let replayed = h.events.descriptions.filter { $0.hasPrefix("failureReplayed") }
        #expect(replayed == ["failureReplayed vehicle v-42 unexpectedStatus (cooling down)"])
    }
}
