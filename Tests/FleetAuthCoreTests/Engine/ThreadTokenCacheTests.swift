import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// A thread serves a hot scope from its own line (``ThreadTokenCache``): these tests warm a
/// line with a few lookups in a row on one thread, change the cache behind it, and check
/// that the very next lookup sees the change, and that every hit is counted.
@Suite("Thread lines: a hot scope served without the lock, never past a change")
struct ThreadTokenCacheTests {
    let v42 = AuthorizationScope.vehicle("v-42")
    let v7 = AuthorizationScope.vehicle("v-7")

    /// Synchronous lookups in a row: one thread, so its line fills and then serves. Tests
    /// compare what it returns outside `#expect` and expect the Bool, so that a failure
    /// prints no token value.
    func warm(_ engine: TokenEngine, _ scope: AuthorizationScope, lookups: Int = 40) -> Set<String> {
        Set((0..<lookups).compactMap { _ in engine.cachedUsableToken(for: scope)?.value })
    }

    @Test func aWarmLineServesTheCachedTokenAndCountsEveryHit() async throws {
        let h = try EngineHarness()
        let token = try await h.engine.token(for: v42)
        let linesServeTheToken = warm(h.engine, v42) == [token.value]
        #expect(linesServeTheToken)
        // The value path serves the same value, from the line's own copy after a few hits.
        let values = (0..<40).compactMap { _ in h.engine.cachedUsableValue(for: v42) }
        let valuePathServesTheToken = Set(values) == [token.value]
        #expect(valuePathServesTheToken)
        #expect(h.engine.cachedUsableToken(for: v42) == token)
        #expect(h.engine.statistics.hits == 81)
        #expect(h.engine.statistics.fetches == 1)
    }

    @Test func aRejectedTokenIsNotServedFromAWarmLine() async throws {
        let h = try EngineHarness()
        let token = try await h.engine.token(for: v42)
        _ = warm(h.engine, v42)
        #expect(h.engine.invalidate(token.value, for: v42))
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
        let valueStillServed = h.engine.cachedUsableValue(for: v42) != nil
        #expect(!valueStillServed)
        let next = try await h.engine.token(for: v42)
        let refetchedAnother = next.value != token.value
        #expect(refetchedAnother)
        let linesServeTheNewToken = warm(h.engine, v42) == [next.value]
        #expect(linesServeTheNewToken)
    }

    @Test func signingOutEmptiesEveryWarmLine() async throws {
        let h = try EngineHarness()
        _ = try await h.engine.token(for: v42)
        _ = try await h.engine.token(for: v7)
        _ = warm(h.engine, v42)
        _ = warm(h.engine, v7)
        h.engine.invalidateAll()
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
        let valueStillServed = h.engine.cachedUsableValue(for: v7) != nil
        #expect(!valueStillServed)
    }

    @Test func anEvictedScopeIsNotServedFromAWarmLine() async throws {
        let h = try EngineHarness(cacheCapacity: 1)
        _ = try await h.engine.token(for: v42)
        _ = warm(h.engine, v42)
        _ = try await h.engine.token(for: v7)
        #expect(h.engine.statistics.cachedScopes == 1)
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
    }

    @Test func aLineStopsAtTheRefreshWindowAndServesTheRefreshedToken() async throws {
        let h = try EngineHarness()
        let first = try await h.engine.token(for: v42)
        _ = warm(h.engine, v42)
        // Past the outage reserve, before the minimum remaining lifetime: the lookup must
        // reach the shard, which serves the token stale and starts the refresh.
        h.clock.advance(by: 3600 - 310)
        #expect(h.engine.cachedUsableToken(for: v42) == first)
        await h.engine.waitUntilIdle()
        #expect(h.engine.statistics.fetches == 2)
        let refreshed = try #require(h.engine.cachedUsableToken(for: v42))
        let refreshedAnother = refreshed.value != first.value
        #expect(refreshedAnother)
        let linesServeTheRefreshedToken = warm(h.engine, v42) == [refreshed.value]
        #expect(linesServeTheRefreshedToken)
    }

    @Test func aLineNeverServesPastExpiryOnTheMonotonicClock() async throws {
        let h = try EngineHarness()
        _ = try await h.engine.token(for: v42)
        _ = warm(h.engine, v42)
        h.clock.advance(by: 3601)
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
    }

    @Test func hitsOnOtherThreadsAddUp() async throws {
        let h = try EngineHarness()
        _ = try await h.engine.token(for: v42)
        let engine = h.engine
        let scope = v42
        let served = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    (0..<500).reduce(0) { sum, _ in sum + (engine.cachedUsableToken(for: scope) == nil ? 0 : 1) }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(served == 2000)
        #expect(h.engine.statistics.hits == 2000)
    }
}
