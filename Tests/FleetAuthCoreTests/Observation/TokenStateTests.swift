import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// A vehicle context for provider tests.
struct TruckContext: AuthorizationContext {
    var vehicleID: String
    var scope: AuthorizationScope { .vehicle(vehicleID) }
}

/// A provider on an in-memory backend and a manual clock.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
struct ProviderHarness {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let backend: InMemoryTokenBackend
    let provider: TokenProvider<TruckContext>

    init(latency: TimeInterval = 0) throws {
        transport = InMemoryTransport(clock: clock, latency: latency)
        backend = InMemoryTokenBackend(clock: clock)
        transport.mount(backend, at: "/token")
        provider = try TokenProvider<TruckContext>(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
            retry: RetryPolicy(jitter: 0))
    }

    /// Starts a reader of `stream` on the clock (``StateWatcher``).
    func watch(_ stream: AsyncStream<TokenState>) -> StateWatcher { StateWatcher(stream, on: clock) }

    /// Makes every backend request fail with `status` (`nil`: none fail).
    func backendFails(_ status: Int?) {
        transport.setFaultInjector { request, _ in
            guard let status, request.url.path == "/token" else { return nil }
            return .status(status)
        }
    }
}

/// Reads a state stream in a task of its own on the test's clock, so that settling the clock
/// lets it read every state sent so far, and keeps what it read.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class StateWatcher: Sendable {
    private let seen = LockedState<[TokenState]>([])
    private let ended = LockedState(false)
    private let task: Task<Void, any Error>
    private let clock: ManualWallClock

    init(_ stream: AsyncStream<TokenState>, on clock: ManualWallClock) {
        let (seen, ended) = (self.seen, self.ended)
        self.clock = clock
        task = clock.startSimulated {
            for await state in stream { seen.withLock { $0.append(state) } }
            ended.withLock { $0 = true }
        }
    }

    deinit { task.cancel() }

    var states: [TokenState] { seen.withLock { $0 } }
    var phases: [String] { states.map { "\($0.phase)" } }
    var hasEnded: Bool { ended.withLock { $0 } }

    /// The phases read once the clock's work has settled, which must be at least `count`.
    @discardableResult
    func phases(count: Int, fileID: String = #fileID, line: Int = #line) async throws -> [String] {
        try await clock.settled({ states.count >= count ? phases : nil }, fileID: fileID, line: line)
    }
}

@Suite("Token state as it changes", .timeLimit(.minutes(10)))
struct TokenStateTests {
    let truck = TruckContext(vehicleID: "v-42")

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTokenGoesFromFreshThroughRefreshingToFreshAgain() async throws {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates(for: truck))
        try await watcher.phases(count: 1)
        let first = try await h.provider.token(for: truck)
        try await watcher.phases(count: 3)
        // Late in its life a lookup serves the token and refreshes it in the background.
        h.clock.advance(by: 3600 - 310)
        let served = try #require(h.provider.cachedUsableToken(for: truck))
        #expect(served.fingerprint == first.fingerprint)
        await h.provider.waitUntilIdle()
        let phases = try await watcher.phases(count: 5)
        #expect(phases == ["noToken", "refreshing", "fresh", "refreshing", "fresh"])
        let states = watcher.states
        #expect(states[2].tokenFingerprint == first.fingerprint)
        #expect(states[3].tokenFingerprint == first.fingerprint)  // still handed out while refreshing
        #expect(states[4].tokenFingerprint != first.fingerprint)
        #expect(states[4].expiresAt == h.clock.now().addingTimeInterval(3600))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anOutageShowsAsDegradedThenFailedThenFreshWhenTheBackendReturns() async throws {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates(for: truck))
        let first = try await h.provider.token(for: truck)
        try await watcher.phases(count: 3)
        // The backend goes down. Nobody asks while the token passes its minimum remaining
        // life, so the stream hears the clock say so (`noToken`) before any lookup: the clock
        // runs to that moment and settles, so that no lookup races the stream's clock.
        h.backendFails(503)
        await h.clock.run(until: h.clock.now().addingTimeInterval(3600 - 200))
        // A caller with 200 s of life left still gets the token.
        let degraded = try await h.provider.token(for: truck)
        #expect(degraded.fingerprint == first.fingerprint)
        let phases = try await watcher.phases(count: 6)
        #expect(Array(phases.suffix(3)) == ["noToken", "refreshing", "degraded"], "\(phases)")
        let warning = watcher.states[5]
        #expect(warning.error?.status == 503 && warning.tokenFingerprint == first.fingerprint)
        // Past the outage floor nothing usable is left: the state says failed, with the error.
        h.clock.advance(by: 150)
        let past = await h.clock.runToCompletion(horizon: 120) { [provider = h.provider, truck] in
            try await provider.token(for: truck)
        }
        #expect(throws: FleetAuthError.self) { try past.get() }
        // While the caller's retries remain the state says refreshing, with the last error;
        // failed once they are used up.
        let trail = try await h.clock.settled { watcher.phases.last == "failed" ? watcher.phases : nil }
        let failed = try #require(trail.indices.first { $0 >= 6 && trail[$0] == "failed" })
        #expect(trail[6..<failed].allSatisfy { $0 == "refreshing" } && failed >= 6, "\(trail)")
        #expect(watcher.states[6..<failed].allSatisfy { $0.error?.status == 503 && $0.tokenFingerprint == nil })
        #expect(watcher.states[failed].tokenFingerprint == nil)
        #expect(
            watcher.states[failed].error?.status == 503,
            "\(watcher.states[failed]) \(watcher.states[failed].error?.message ?? "")")
        // The backend returns; the next fetch brings a fresh token.
        h.backendFails(nil)
        h.clock.advance(by: 60)
        let back = try await h.provider.token(for: truck)
        #expect(back.fingerprint != first.fingerprint)
        let last = try #require(try await watcher.phases(count: failed + 2).last)
        #expect(last == "fresh")
        #expect(watcher.states.last?.tokenFingerprint == back.fingerprint)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aRejectedTokenAndASignOutAreStatesToo() async throws {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates())
        let token = try await h.provider.token(for: truck)
        _ = try await h.provider.token(for: TruckContext(vehicleID: "v-7"))
        try await watcher.phases(count: 4)
        h.provider.invalidate(token.value, for: truck)
        try await watcher.phases(count: 5)
        #expect(watcher.states[4].scope == truck.scope && watcher.states[4].phase == .noToken)
        h.provider.invalidateAll()
        let phases = try await watcher.phases(count: 7)
        // Every scope the provider knew says signed out: v-7 held a token, the truck's
        // rejection was remembered.
        #expect(phases.suffix(2) == ["signedOut", "signedOut"])
        #expect(Set(watcher.states.suffix(2).map(\.scope)) == [truck.scope, .vehicle("v-7")])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aStreamStartsWithWhatHoldsNow() async throws {
        let h = try ProviderHarness()
        let token = try await h.provider.token(for: truck)
        let watcher = h.watch(h.provider.tokenStates(for: truck))
        try await watcher.phases(count: 1)
        #expect(watcher.states[0].phase == .fresh && watcher.states[0].tokenFingerprint == token.fingerprint)
        let everything = h.watch(h.provider.tokenStates())
        #expect(try await everything.phases(count: 1) == ["fresh"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aStreamOnlyCarriesItsOwnContextAndNoRepeats() async throws {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates(for: truck))
        _ = try await h.provider.token(for: TruckContext(vehicleID: "v-7"))
        _ = try await h.provider.token(for: truck)
        for _ in 0..<10 { _ = try await h.provider.token(for: truck) }
        await h.provider.waitUntilIdle()
        #expect(try await watcher.phases(count: 3) == ["noToken", "refreshing", "fresh"])
        #expect(watcher.states.count == 3)
        #expect(watcher.states.allSatisfy { $0.scope == truck.scope })
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theStreamEndsWhenTheProviderIsReleased() async throws {
        var h: ProviderHarness? = try ProviderHarness()
        let clock = h!.clock
        let watcher = h!.watch(h!.provider.tokenStates(for: truck))
        try await watcher.phases(count: 1)
        #expect(!watcher.hasEnded)
        h = nil
        _ = try await clock.settled { watcher.hasEnded ? true : nil }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func noStateCarriesTheTokenValue() async throws {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates())
        let token = try await h.provider.token(for: truck)
        try await watcher.phases(count: 2)
        for state in watcher.states {
            let text = "\(state) \(String(reflecting: state))"
            for part in token.value.split(separator: ".") { #expect(!text.contains(part)) }
        }
        #expect(watcher.states[1].description.hasPrefix("vehicle v-42 fresh tok_"))
    }
}

@Suite("Prefetch", .timeLimit(.minutes(10)))
struct PrefetchTests {
    let contexts = ["v-1", "v-2", "v-3"].map(TruckContext.init)

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func prefetchWarmsEachContextOnceAndLeavesFreshTokensAlone() async throws {
        let h = try ProviderHarness()
        let failures = await h.provider.prefetch(contexts + contexts)
        #expect(failures.isEmpty)
        #expect(h.backend.mintedCount == 3)
        for context in contexts { #expect(h.provider.cachedUsableToken(for: context) != nil) }
        await h.provider.prefetch(contexts)
        #expect(h.backend.mintedCount == 3)
        #expect(h.transport.requestCount == 3)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func prefetchSharesTheSingleFlightWithCallers() async throws {
        let h = try ProviderHarness(latency: 1)
        let caller = h.clock.startSimulated { [provider = h.provider, context = contexts[0]] in
            try await provider.token(for: context)
        }
        let warming = h.clock.startSimulated { [provider = h.provider, contexts] in
            await provider.prefetch([contexts[0]])
        }
        // Both have reached the one request, and wait for its answer: the prefetch joined.
        await h.clock.settle()
        #expect(h.transport.requestCount == 1)
        #expect(h.provider.statistics.waits == 2)
        h.clock.advance(by: 1)
        _ = try await caller.value
        #expect(try await warming.value.isEmpty)
        #expect(h.transport.requestCount == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func prefetchFailuresAreReturnedAndWatchedNotThrown() async throws {
        let h = try ProviderHarness()
        h.backendFails(403)
        let watcher = h.watch(h.provider.tokenStates(for: contexts[0]))
        let failures = try await h.clock.atOnce { [provider = h.provider, contexts] in
            await provider.prefetch([contexts[0]])
        }
        #expect(failures.count == 1 && failures.first?.status == 403 && failures.first?.scope == contexts[0].scope)
        let phases = try await watcher.phases(count: 3)
        #expect(phases == ["noToken", "refreshing", "failed"])
    }
}

/// A refresh refused (403) while the held token is still handed out: the state says so, and
/// agrees with what a lookup does on both sides of the moment the token stops being handed out.
@Suite("A refused refresh while the token lives", .timeLimit(.minutes(10)))
struct RefusedRefreshStateTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theStateIsRefreshRefusedWhileLookupsHandTheTokenOutThenFailed() async throws {
        let h = try EngineHarness(refresh: RefreshPolicy(adaptsToTraffic: false, spreadsRefreshes: false))
        let v42 = AuthorizationScope.vehicle("v-42")
        let token = try await h.engine.token(for: v42)
        h.transport.setFaultInjector { _, _ in .status(403) }
        h.clock.advance(by: 3120)  // 8 minutes left: stale, a lookup starts a refresh
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        await h.clock.settle()  // the refresh that lookup started is refused at once
        let refused = h.engine.tokenState(of: v42)
        #expect(refused.phase == .refreshRefused, "\(refused)")
        #expect(refused.error?.status == 403 && refused.error?.isTransient == false)
        #expect(refused.tokenFingerprint == token.fingerprint)
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        // With exactly the minimum remaining life (300 s) left, still handed out; a second
        // later, not.
        h.clock.advance(by: 3300 - 3120)
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        #expect(h.engine.tokenState(of: v42).phase == .refreshRefused)
        h.clock.advance(by: 1)
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
        #expect(h.engine.tokenState(of: v42).phase == .failed)
    }
}

/// States compare by what they say, as a SwiftUI view that shows one needs.
@Suite("Token states compare", .timeLimit(.minutes(10)))
struct TokenStateEqualityTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func statesSayingTheSameAreEqualAndAnyDifferenceIsNot() async throws {
        let h = try ProviderHarness()
        let truck = TruckContext(vehicleID: "v-42")
        #expect(h.provider.tokenState(for: truck) == h.provider.tokenState(for: truck))
        let empty = h.provider.tokenState(for: truck)
        _ = try await h.provider.token(for: truck)
        let fresh = h.provider.tokenState(for: truck)
        #expect(fresh != empty)
        #expect(fresh == h.provider.tokenState(for: truck))
        // The same phase with another error is another state.
        h.backendFails(503)
        h.clock.advance(by: 3600 - 200)
        _ = try await h.provider.token(for: truck)
        await h.clock.settle()
        let unavailable = h.provider.tokenState(for: truck)
        h.backendFails(500)
        h.clock.advance(by: 60)
        _ = try await h.provider.token(for: truck)
        await h.clock.settle()
        let failing = h.provider.tokenState(for: truck)
        #expect(unavailable.phase == .degraded && failing.phase == .degraded)
        #expect(unavailable != failing, "\(unavailable) vs \(failing)")
        #expect("\(failing)".hasSuffix(": unexpectedStatus HTTP 500"))
    }
}

/// With no token yet, a failed attempt whose retries remain leaves the state refreshing, with
/// the attempt's error; it turns failed once the retries are used up.
@Suite("A first fetch that fails and retries", .timeLimit(.minutes(10)))
struct FirstFetchRetryStateTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theStateIsRefreshingWhileRetriesRemainThenFailed() async throws {
        let h = try EngineHarness(retry: RetryPolicy(maximumAttempts: 3, initialBackoff: 1, jitter: 0))
        h.transport.setFaultInjector { _, _ in .status(503) }
        let v42 = AuthorizationScope.vehicle("v-42")
        let lookup = h.clock.startSimulated { [engine = h.engine] in try await engine.token(for: v42) }
        await h.clock.settle()  // the first attempt failed; the retry waits for its backoff
        let retrying = h.engine.tokenState(of: v42)
        #expect(retrying.phase == .refreshing && retrying.error?.status == 503, "\(retrying)")
        #expect(h.events.all.contains { $0.kind == .fetchRetried })
        await h.clock.run(until: h.clock.now().addingTimeInterval(10))
        await #expect(throws: FleetAuthError.self) { try await lookup.value }
        let failed = h.engine.tokenState(of: v42)
        #expect(failed.phase == .failed && failed.error?.status == 503, "\(failed)")
    }
}
