import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Token engine: cache, freshness and single flight", .timeLimit(.minutes(10)))
struct TokenEngineTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func secondCallIsServedFromCache() async throws {
        let h = try EngineHarness()
        let first = try await h.engine.token(for: v42)
        let second = try await h.engine.token(for: v42)
        #expect(first == second)
        #expect(h.transport.requestCount == 1)
        #expect(h.events.count { if case .servedFresh = $0.detail { true } else { false } } == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func requestNamesTheVehicle() async throws {
        let h = try EngineHarness()
        _ = try await h.engine.token(for: .vehicle("v 42+", taskID: "t&1=é"))
        let url = try #require(h.transport.requests.first?.url)
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(items.contains(URLQueryItem(name: "vehicleId", value: "v 42+")))
        #expect(items.contains(URLQueryItem(name: "taskId", value: "t&1=é")))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func thousandConcurrentCallersOnAColdCacheMakeOneRequest() async throws {
        let h = try EngineHarness(latency: 0.2)
        let tasks = await h.startFetches(1000, for: v42)
        try await h.clock.settledSleepers(count: 1, within: 1)
        h.clock.advance(by: 0.2)
        var values = Set<String>()
        for task in tasks { values.insert(try await task.value.value) }
        #expect(h.transport.requestCount == 1)
        #expect(values.count == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func scopesNeverShareTokens() async throws {
        let h = try EngineHarness()
        let a = try await h.engine.token(for: .vehicle("v-1"))
        let b = try await h.engine.token(for: .vehicle("v-2"))
        let t = try await h.engine.token(for: .trip("v-1"))
        #expect(Set([a.value, b.value, t.value]).count == 3)
        #expect(a.claims.covers(.vehicle("v-1")) && !a.claims.covers(.vehicle("v-2")))
        #expect(t.claims.covers(.trip("v-1")) && !t.claims.covers(.vehicle("v-1")))
        #expect(h.transport.requestCount == 3)
        #expect(try await h.engine.token(for: .vehicle("v-2")) == b)
        #expect(h.transport.requestCount == 3)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func switchingBetweenTwoTripsDoesNotRefetch() async throws {
        let h = try EngineHarness()
        for _ in 0..<5 {
            _ = try await h.engine.token(for: .trip("t-1"))
            _ = try await h.engine.token(for: .trip("t-2"))
        }
        #expect(h.transport.requestCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theDefaultCapacityServesAFleetOfAHundredWithoutRefetching() async throws {
        let h = try EngineHarness(
            cacheCapacity: TokenProviderConfiguration(
                endpoint: TokenEndpoint(url: "https://b.example/t"), transport: InMemoryTransport()
            ).cacheCapacity)
        for _ in 0..<3 {
            for index in 0..<100 { _ = try await h.engine.token(for: .vehicle("v-\(index)")) }
        }
        #expect(h.transport.requestCount == 100)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFullCacheEvictsTheScopeStoredLongestAgoAndWarnsEveryTimeItWasUsable() async throws {
        let h = try EngineHarness(cacheCapacity: 2)
        _ = try await h.engine.token(for: .vehicle("a"))
        _ = try await h.engine.token(for: .vehicle("b"))
        _ = try await h.engine.token(for: .vehicle("a"))  // a lookup does not reorder
        _ = try await h.engine.token(for: .vehicle("c"))  // evicts a, its token still usable
        #expect(h.engine.statistics.cachedScopes == 2)
        #expect(h.engine.cachedToken(for: .vehicle("a")) == nil)
        #expect(h.engine.cachedToken(for: .vehicle("b")) != nil)
        _ = try await h.engine.token(for: .vehicle("d"))  // evicts b, usable too
        let evictions = h.events.all.filter { $0.kind == .evictedUsable }
        #expect(evictions.map(\.level) == [.warning, .warning])
        #expect(evictions.map(\.scope) == [.vehicle("a"), .vehicle("b")])
        #expect(evictions.allSatisfy { $0.description.contains("raise cacheCapacity") })
        #expect(evictions.first?.description.contains("cacheCapacity (2)") == true)
        #expect(h.events.all.filter { $0.kind == .evicted }.isEmpty)
        #expect(h.engine.statistics.evictedUsable == 2)
        #expect(h.engine.statistics.description.hasSuffix(", evicted while usable 2 (raise cacheCapacity)"))
        #expect(h.events.all.filter { $0.kind == .evictedUsable }.count == h.engine.statistics.evictedUsable)
    }

    /// The warning's edge: a token at its outage floor is no longer usable, so dropping it
    /// says nothing; one second before, it is.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [(3599.0 - 60, true), (3600.0 - 60, false)])
    func dropping(aTokenThisOld age: TimeInterval, warns: Bool) async throws {
        let h = try EngineHarness(cacheCapacity: 1)
        _ = try await h.engine.token(for: .vehicle("a"))
        h.clock.advance(by: age)
        _ = try await h.engine.token(for: .vehicle("b"))
        let eviction = h.events.all.first { $0.kind == .evicted || $0.kind == .evictedUsable }
        #expect(eviction?.kind == (warns ? .evictedUsable : .evicted), "\(eviction.map(\.description) ?? "none")")
        #expect(eviction?.level == (warns ? .warning : .info), "\(eviction.map(\.description) ?? "none")")
        #expect(h.engine.statistics.evictedUsable == (warns ? 1 : 0))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func staleTokenIsReturnedAtOnceWhileOneRefreshRuns() async throws {
        // The full 600 s window; the adaptive one is tested on its own below.
        let h = try EngineHarness(latency: 0.2, refresh: RefreshPolicy(adaptsToTraffic: false, spreadsRefreshes: false))
        let initial = h.clock.startSimulated { [engine = h.engine, v42] in try await engine.token(for: v42) }
        try await h.clock.settledSleepers(count: 1, within: 1)
        h.clock.advance(by: 0.2)
        let first = try await initial.value
        h.clock.advance(by: 3000)  // 600 s left: inside the refresh window
        let stale = try await h.clock.atOnce { [engine = h.engine, v42] in try await engine.token(for: v42) }
        let staleAgain = try await h.clock.atOnce { [engine = h.engine, v42] in try await engine.token(for: v42) }
        #expect(stale == first && staleAgain == first)
        await h.clock.settle()
        #expect(h.transport.requestCount == 2)  // one refresh, not two
        h.clock.advance(by: 0.2)
        let refreshed = try await h.clock.settled { h.engine.cachedToken(for: v42).flatMap { $0 == first ? nil : $0 } }
        #expect(refreshed.expiresAt > first.expiresAt)
        #expect(h.events.count { if case .refreshScheduled = $0.detail { true } else { false } } == 1)
        #expect(h.events.count { if case .servedStale = $0.detail { true } else { false } } == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func expiringTokenMakesCallersWaitForTheNewOne() async throws {
        let h = try EngineHarness()
        let first = try await h.engine.token(for: v42)
        h.clock.advance(by: 3400)  // 200 s left: under the 300 s minimum
        let second = try await h.engine.token(for: v42)
        #expect(second != first)
        #expect(second.expiresAt.timeIntervalSince(h.clock.now()) >= 300)
        #expect(h.transport.requestCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func returnedTokensAlwaysHaveTheMinimumLifeLeft() async throws {
        let h = try EngineHarness()
        for _ in 0..<200 {
            let token = try await h.engine.token(for: v42)
            #expect(token.expiresAt.timeIntervalSince(h.clock.now()) > 300)
            h.clock.advance(by: 61)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func shortLivedTokensDoNotCauseARefetchLoop() async throws {
        let h = try EngineHarness(backend: .init(lifetime: 120))
        for _ in 0..<120 {  // ten minutes of updates every 5 s
            let token = try await h.engine.token(for: v42)
            #expect(token.expiresAt.timeIntervalSince(h.clock.now()) > 0)
            h.clock.advance(by: 5)
        }
        // A 2-minute token is usable for 90 s (30 s margin): about 7 fetches, not 120.
        #expect(h.transport.requestCount >= 6)
        #expect(h.transport.requestCount <= 12)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func backgroundRefreshKeepsSteadyCallersOffTheNetwork() async throws {
        let h = try EngineHarness()
        let calls = 4 * 720  // four hours of updates every 5 s
        for _ in 0..<calls {
            _ = try await h.engine.token(for: v42)
            h.clock.advance(by: 5)
            await h.engine.waitUntilIdle()
        }
        // Every call but the very first was answered from the cache without waiting.
        let served = h.events.count {
            switch $0.detail {
            case .servedFresh, .servedStale: true
            default: false
            }
        }
        #expect(served == calls - 1)
        // One fetch at start, then one per 50 minutes (refresh 10 minutes before expiry).
        #expect(h.transport.requestCount <= 4 * 3600 / 3000 + 1)
    }
}

@Suite("Token engine: statistics and idleness", .timeLimit(.minutes(10)))
struct TokenEngineStatisticsTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func statisticsCountFetchesHitsAndWaits() async throws {
        let h = try EngineHarness(latency: 0.2)
        let callers = await h.startFetches(10, for: v42)
        try await h.clock.settledSleepers(count: 1, within: 1)
        #expect(h.engine.statistics.activeFetches == 1)
        h.clock.advance(by: 0.2)
        for caller in callers { _ = try await caller.value }
        for _ in 0..<5 { _ = try await h.engine.token(for: v42) }
        let statistics = h.engine.statistics
        #expect(statistics.fetches == 1)
        #expect(statistics.waits == 10)
        #expect(statistics.hits == 5)
        #expect(statistics.cachedScopes == 1)
        #expect(statistics.activeFetches == 0)
        #expect(statistics.description == "fetches 1, hits 5, waits 10, degraded 0, cached 1, in flight 0")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func waitUntilIdleReturnsWhenTheLastFetchEnds() async throws {
        let h = try EngineHarness(latency: 0.2)
        await h.engine.waitUntilIdle()  // idle from the start
        let caller = h.clock.startSimulated { [engine = h.engine, v42] in try await engine.token(for: v42) }
        try await h.clock.settledSleepers(count: 1, within: 1)
        let idle = Task { [engine = h.engine] in
            await engine.waitUntilIdle()
            return engine.statistics.activeFetches
        }
        h.clock.advance(by: 0.2)
        #expect(await idle.value == 0)
        _ = try await caller.value
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func waitUntilIdleAlsoReturnsOnSignOut() async throws {
        let h = try EngineHarness(latency: 60)
        let caller = h.clock.startSimulated { [engine = h.engine, v42] in try await engine.token(for: v42) }
        try await h.clock.settledSleepers(count: 1, within: 60)
        let idle = Task { [engine = h.engine] in await engine.waitUntilIdle() }
        h.engine.invalidateAll()
        await idle.value
        await #expect(throws: FleetAuthError.self) { try await caller.value }
    }
}

@Suite("Token engine: capacity", .timeLimit(.minutes(10)))
struct TokenEngineCapacityTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theCacheKeepsItsCapacityThroughManyScopesAndASignOut() async throws {
        let h = try EngineHarness(cacheCapacity: 256)
        for index in 0..<1000 { _ = try await h.engine.token(for: .vehicle("vehicle-\(index)")) }
        #expect(h.engine.statistics.cachedScopes == 256)
        // The most recent ones are cached: the last vehicle is served without a fetch.
        let fetches = h.engine.statistics.fetches
        _ = try await h.engine.token(for: .vehicle("vehicle-999"))
        #expect(h.engine.statistics.fetches == fetches)
        h.engine.invalidateAll()
        #expect(h.engine.statistics.cachedScopes == 0)
        for index in 0..<300 { _ = try await h.engine.token(for: .vehicle("trip-\(index)")) }
        #expect(h.engine.statistics.cachedScopes == 256)
    }
}

@Suite("Token engine: the synchronous lookup", .timeLimit(.minutes(10)))
struct TokenEngineSynchronousLookupTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func itAnswersFromTheCacheOrSaysAFetchIsNeeded() async throws {
        let h = try EngineHarness(refresh: RefreshPolicy(adaptsToTraffic: false, spreadsRefreshes: false))
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
        #expect(h.transport.requestCount == 0)  // it never fetches on its own
        let first = try await h.engine.token(for: v42)
        #expect(h.engine.cachedUsableToken(for: v42) == first)
        h.clock.advance(by: 3000)  // stale: handed out, and one refresh starts
        #expect(h.engine.cachedUsableToken(for: v42) == first)
        await h.engine.waitUntilIdle()
        #expect(h.transport.requestCount == 2)
        h.clock.advance(by: 3400)  // the refreshed token is expiring too: a fetch is needed
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
    }
}

@Suite("Token engine: per-scope state is bounded by the cache", .timeLimit(.minutes(10)))
struct TokenEnginePerScopeBoundTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func failuresAndRejectionsOfManyScopesStayWithinTwiceTheCapacity() async throws {
        let h = try EngineHarness(cacheCapacity: 8)
        h.transport.setFaultInjector { _, _ in .status(400) }
        for index in 0..<200 {
            let result = await h.clock.runToCompletion(horizon: 0) { [engine = h.engine] in
                try await engine.token(for: .vehicle("v-\(index)"))
            }
            #expect(throws: FleetAuthError.self) { try result.get() }
        }
        #expect(h.engine.keptFailureScopes.outages <= 16)
        #expect(h.engine.keptFailureScopes.outages > 0)
        for index in 0..<200 { h.engine.invalidate("rejected-\(index)", for: .vehicle("w-\(index)")) }
        #expect(h.engine.keptFailureScopes.rejected <= 16)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anEvictedScopeLeavesNothingBehind() async throws {
        let h = try EngineHarness(cacheCapacity: 1)
        _ = try await h.engine.token(for: .vehicle("a"))
        h.engine.invalidate("rejected-a", for: .vehicle("a"))
        _ = try await h.engine.token(for: .vehicle("a"))
        #expect(h.engine.keptFailureScopes.rejected == 1)
        _ = try await h.engine.token(for: .vehicle("b"))  // evicts a
        #expect(h.engine.keptFailureScopes.rejected == 0)
    }
}
