import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// A fleet started together: at most `concurrentFetchLimit` fetches make their first attempt
/// at once, the others wait their turn, and a caller waits no longer than its budget.
@Suite("Token engine: a fleet's first fetches take turns", .timeLimit(.minutes(10)))
struct FetchSlotsTests {
    let scopes = (0..<5).map { AuthorizationScope.vehicle("v-\($0)") }

    /// The vehicle IDs of the token requests sent so far, in order.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func requestedIDs(_ h: EngineHarness) -> [String] {
        h.transport.requests.compactMap { request in
            URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?
                .first { $0.name == "vehicleId" }?.value
        }
    }

    /// Starts one caller per scope, each registered before the next starts.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func startCallers(_ h: EngineHarness) async -> [Task<AuthToken, any Error>] {
        var tasks: [Task<AuthToken, any Error>] = []
        for scope in scopes {
            tasks.append(h.clock.startSimulated { [engine = h.engine] in try await engine.token(for: scope) })
            await h.clock.settle()
        }
        return tasks
    }

    /// Five callers on an engine with two slots and a 1-s backend: two requests, then two more
    /// as those end, then the last; every caller gets its token and no request is repeated.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func expectTwoAtATime(_ h: EngineHarness) async throws {
        let tasks = await startCallers(h)
        #expect(requestedIDs(h) == ["v-0", "v-1"])
        h.clock.advance(by: 1)
        await h.clock.settle()
        #expect(requestedIDs(h) == ["v-0", "v-1", "v-2", "v-3"])
        h.clock.advance(by: 1)
        await h.clock.settle()
        #expect(requestedIDs(h) == ["v-0", "v-1", "v-2", "v-3", "v-4"])
        h.clock.advance(by: 1)
        for (scope, task) in zip(scopes, tasks) {
            let token = try await h.settledResult(of: task).get()
            #expect(token.claims.covers(scope))
        }
        await h.engine.waitUntilIdle()
        #expect(h.transport.requestCount == 5)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func fetchesBeyondTheLimitWaitTheirTurnInTheOrderTheyCame() async throws {
        try await expectTwoAtATime(EngineHarness(latency: 1, concurrentFetchLimit: 2))
    }

    /// The limit comes from the transport: one that sends at most so many token requests at
    /// once (a URL session behind its connections) gives the provider that many slots.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTransportThatBoundsItsTokenRequestsGivesThatManySlots() async throws {
        try await expectTwoAtATime(EngineHarness(latency: 1, tokenRequestsAtOnce: 2))
    }

    /// A transport that does not say how many it sends at once (FleetAuth's in-memory doubles,
    /// an app's own) leaves the limit far above a fleet started together.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTransportThatDoesNotBoundItsTokenRequestsLeavesTheLimitHigh() async throws {
        let h = try EngineHarness(latency: 1)
        let tasks = await startCallers(h)
        #expect(requestedIDs(h) == ["v-0", "v-1", "v-2", "v-3", "v-4"])
        h.clock.advance(by: 1)
        for (scope, task) in zip(scopes, tasks) {
            #expect(try await h.settledResult(of: task).get().claims.covers(scope))
        }
        let endpoint = TokenEndpoint(url: "https://backend.example.com/token", format: .tokenOnly)
        func limit(through transport: any HTTPTransport) -> Int {
            TokenProviderConfiguration(endpoint: endpoint, transport: transport).concurrentFetchLimit
        }
        #expect(limit(through: h.transport) == TokenProviderConfiguration.defaultConcurrentFetchLimit)
        // Nor does a transport's bound raise it past the provider's own.
        #expect(limit(through: BoundedTransport(h.transport, limit: 1_000_000)) == 4096)
        #expect(limit(through: BoundedTransport(h.transport, limit: 3)) == 3)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFetchRetryingThroughAnOutageMakesRoomForTheNext() async throws {
        let h = try EngineHarness(latency: 1, concurrentFetchLimit: 1)
        // The first vehicle's first attempt fails; it retries after its backoff (0.5 s).
        h.transport.inject([.status(503)])
        let tasks = await startCallers(h)
        #expect(requestedIDs(h) == ["v-0"])
        h.clock.advance(by: 1)
        await h.clock.settle()
        // The failed attempt made room at once: the next vehicle did not wait for the retry.
        #expect(requestedIDs(h) == ["v-0", "v-1"])
        h.clock.advance(by: 0.5)
        await h.clock.settle()
        #expect(requestedIDs(h) == ["v-0", "v-1", "v-0"])
        for _ in 0..<4 {
            h.clock.advance(by: 1)
            await h.clock.settle()
        }
        for (scope, task) in zip(scopes, tasks) {
            let token = try await h.settledResult(of: task).get()
            #expect(token.claims.covers(scope))
        }
        #expect(requestedIDs(h).sorted() == ["v-0", "v-0", "v-1", "v-2", "v-3", "v-4"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aCallerWaitingForItsTurnFailsAtItsRetryDeadlineWithoutARequest() async throws {
        let h = try EngineHarness(
            refresh: RefreshPolicy(adaptsToTraffic: false, spreadsRefreshes: false),
            retry: RetryPolicy(jitter: 0, deadline: 10), concurrentFetchLimit: 1)
        _ = try await h.engine.token(for: scopes[0])
        // A background refresh that hangs holds the only slot past the next caller's budget
        // (its attempt is bounded by the endpoint's 15-s timeout, not by a caller's budget).
        h.clock.advance(by: 3000)  // stale: handed out, and a refresh starts
        h.transport.inject([.hang])
        #expect(h.engine.cachedUsableToken(for: scopes[0]) != nil)
        await h.clock.settle()
        let waiting = h.clock.startSimulated { [engine = h.engine, scope = scopes[1]] in
            try await engine.token(for: scope)
        }
        await h.clock.settle()
        #expect(h.engine.tokenState(of: scopes[1]).phase == .refreshing)
        h.clock.advance(by: 9.9)
        await h.clock.settle()
        #expect(requestedIDs(h) == ["v-0", "v-0"])
        h.clock.advance(by: 0.1)
        guard case .failure(let failure) = try await h.settledResult(of: waiting) else {
            Issue.record("the caller waiting for its turn got a token")
            return
        }
        let error = try #require(failure as? FleetAuthError)
        #expect(error.code == .timedOut)
        #expect(error.message.contains("waited its turn"))
        #expect(error.message.contains("RetryPolicy(deadline:)"))
        // The limit below the provider's own reads as the transport's, and the message names its setting.
        #expect(error.message.contains("httpMaximumConnectionsPerHost"))
        // Nothing was sent for it, and its scope no longer stands refreshing.
        #expect(requestedIDs(h) == ["v-0", "v-0"])
        #expect(h.engine.tokenState(of: scopes[1]).phase == .noToken)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func signingOutDropsTheQueueAndTheNextCallerFetchesAtOnce() async throws {
        let h = try EngineHarness(latency: 1, concurrentFetchLimit: 1)
        let tasks = await startCallers(h)
        #expect(requestedIDs(h) == ["v-0"])
        h.engine.invalidateAll()
        for task in tasks {
            guard case .failure(let failure) = try await h.settledResult(of: task) else {
                Issue.record("a caller got a token after the sign-out")
                continue
            }
            #expect((failure as? FleetAuthError)?.code == .signedOut)
        }
        // The cancelled fetch gave its slot back; no flight dropped from the queue takes it.
        let next = h.clock.startSimulated { [engine = h.engine, scope = scopes[4]] in try await engine.token(for: scope)
        }
        await h.clock.settle()
        #expect(requestedIDs(h) == ["v-0", "v-4"])
        h.clock.advance(by: 1)
        #expect(try await h.settledResult(of: next).get().claims.covers(scopes[4]))
    }
}
