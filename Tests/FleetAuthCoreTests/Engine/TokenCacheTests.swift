import FleetAuthCore
import Foundation
import Testing

@Suite("Token cache: entries and eviction of the scope stored longest ago", .timeLimit(.minutes(10)))
struct TokenCacheTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let uptime = now.timeIntervalSince1970

    static func entry(_ id: String, lifetime: TimeInterval = 3600) -> TokenCache.Entry {
        let token = AuthToken(
            value: "token-\(id)", scope: .vehicle(id), receivedAt: now, expiresAt: now.addingTimeInterval(lifetime),
            lifetime: lifetime)
        return TokenCache.Entry(token: token, policy: RefreshPolicy())
    }

    @Test func storesPeeksAndReplacesWithoutEvicting() {
        var cache = TokenCache(capacity: 2)
        #expect(cache.store(Self.entry("a"))?.scope == nil)
        #expect(cache.store(Self.entry("a", lifetime: 1800))?.scope == nil)
        #expect(cache.count == 1)
        #expect(cache.peek(.vehicle("a"))?.token.lifetime == 1800)
        #expect(cache.peek(.vehicle("b")) == nil)
    }

    @Test func aFullCacheEvictsTheEntryStoredLongestAgo() {
        var cache = TokenCache(capacity: 3)
        for id in ["a", "b", "c"] { _ = cache.store(Self.entry(id)) }
        // Lookups do not reorder: a fleet cycling through its vehicles keeps its order.
        _ = cache.use(.vehicle("a"), at: Self.uptime)
        #expect(cache.store(Self.entry("d"))?.scope == .vehicle("a"))
        #expect(cache.count == 3)
        // Replacing an entry (a refresh) stores it anew and evicts nothing.
        #expect(cache.store(Self.entry("b", lifetime: 1800)) == nil)
        #expect(cache.store(Self.entry("e"))?.scope == .vehicle("c"))
        let evicted = cache.store(Self.entry("f"))
        #expect(evicted?.scope == .vehicle("d") && evicted?.entry.token.value == "token-d")
        #expect(Set(cache.scopes) == [.vehicle("b"), .vehicle("e"), .vehicle("f")])
    }

    /// Refreshes move an entry to the new end of the store order; removals close their gap
    /// (the last slot moves into it) without changing the order of the others.
    @Test func theStoreOrderFollowsRefreshesAndRemovals() {
        var cache = TokenCache(capacity: 1000)
        for id in ["a", "b", "c", "d", "e"] { _ = cache.store(Self.entry(id)) }
        _ = cache.store(Self.entry("b", lifetime: 1800))
        #expect(cache.scopesInStoreOrder.map(\.id) == ["a", "c", "d", "e", "b"])
        cache.remove(.vehicle("c"))
        #expect(cache.scopesInStoreOrder.map(\.id) == ["a", "d", "e", "b"])
        cache.remove(.vehicle("a"))
        cache.remove(.vehicle("b"))
        #expect(cache.scopesInStoreOrder.map(\.id) == ["d", "e"])
        _ = cache.store(Self.entry("f"))
        _ = cache.store(Self.entry("d", lifetime: 1800))
        #expect(cache.scopesInStoreOrder.map(\.id) == ["e", "f", "d"])
        #expect(cache.peek(.vehicle("d"))?.token.lifetime == 1800)
        #expect(cache.peek(.vehicle("e"))?.token.value == "token-e")
        cache.removeAll()
        #expect(cache.scopesInStoreOrder.isEmpty)
    }

    /// Every cached token holds its scope: a scope is its two IDs and 8 bytes (hash and
    /// kind), 40 bytes on 64-bit platforms (32 on 32-bit ones), not 48.
    @Test func aScopeTakesItsIDsAndEightBytes() {
        #expect(MemoryLayout<AuthorizationScope>.stride == 2 * MemoryLayout<String>.stride + 8)
    }

    static func entry(for scope: AuthorizationScope) -> TokenCache.Entry {
        let token = AuthToken(
            value: "token-\(scope)", scope: scope, receivedAt: now, expiresAt: now.addingTimeInterval(3600),
            lifetime: 3600)
        return TokenCache.Entry(token: token, policy: RefreshPolicy())
    }

    /// Scopes whose searches share one run of places across the end of the cache's first
    /// index (16 places), and a trip with a vehicle's ID (the same hash, another scope):
    /// each removal moves the later ones back to the earliest place their search reaches.
    @Test func collidingScopesAreFoundAfterRemovalsAcrossTheIndexEnd() throws {
        let homes = Dictionary(grouping: (0..<2000).map { AuthorizationScope.vehicle("c\($0)") }) {
            $0.hashValue & 15
        }
        let first = try #require(homes[14]?.first)
        let second = try #require(homes[14]?.last)
        let third = try #require(homes[15]?.first)
        let fourth = try #require(homes[0]?.first)
        let trip = AuthorizationScope.trip(first.id)
        let all = [first, second, third, fourth, trip]
        var cache = TokenCache(capacity: 7)
        for scope in all { #expect(cache.store(Self.entry(for: scope)) == nil) }
        var kept = all
        for removed in [first, third, second] {
            #expect(cache.remove(removed)?.token.scope == removed)
            kept.removeAll { $0 == removed }
            for scope in all {
                #expect(cache.peek(scope)?.token.value == (kept.contains(scope) ? "token-\(scope)" : nil), "\(scope)")
            }
            #expect(cache.scopesInStoreOrder == kept)
        }
    }

    @Test func aRemovedEntryFreesItsSlotForTheNextStore() {
        var cache = TokenCache(capacity: 2)
        _ = cache.store(Self.entry("a"))
        _ = cache.store(Self.entry("b"))
        #expect(cache.remove(.vehicle("a"))?.token.value == "token-a")
        #expect(cache.remove(.vehicle("a")) == nil)
        #expect(cache.store(Self.entry("c")) == nil)
        #expect(cache.count == 2)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.store(Self.entry("d")) == nil)
    }

    @Test func manyScopesNeverExceedCapacityAndTheNewestSurvive() {
        var cache = TokenCache(capacity: 100)
        for index in 0..<10_000 { _ = cache.store(Self.entry("v\(index)")) }
        #expect(cache.count == 100)
        #expect(Set(cache.scopes) == Set((9900..<10_000).map { AuthorizationScope.vehicle("v\($0)") }))
    }

    @Test(arguments: [
        (0.0, RefreshPolicy.Freshness.fresh), (2999, .fresh), (3000, .stale), (3299, .stale), (3300, .stale),
        (3301, .expiring), (9999, .expiring),
    ])
    func anHourLongTokenTurnsStaleAtTheWindowAndExpiringAtTheMinimum(
        secondsLater: TimeInterval, expected: RefreshPolicy.Freshness
    ) {
        // The default policy's full window: 600 s before expiry stale; with exactly 300 s left
        // still handed out (the contract's "at least 5 minutes"), with less expiring.
        #expect(Self.entry("a").freshness(at: Self.uptime + secondsLater) == expected)
    }

    @Test func entriesAgreeWithADictionaryThroughThousandsOfStoresRemovalsAndEvictions() {
        var cache = TokenCache(capacity: 300)
        var reference: [AuthorizationScope: String] = [:]
        var storeOrder: [AuthorizationScope] = []
        var entries: [String: TokenCache.Entry] = [:]
        for step in 0..<6000 {
            let id = "v-\(Int.random(in: 0..<500))"
            let scope = AuthorizationScope.vehicle(id)
            if Int.random(in: 0..<10) < 6 {
                let entry = entries[id] ?? Self.entry(id)
                entries[id] = entry
                if let evicted = cache.store(entry) {
                    #expect(evicted.scope == storeOrder.first, "step \(step)")
                    reference[evicted.scope] = nil
                    storeOrder.removeFirst()
                }
                reference[scope] = entry.token.fingerprint
                storeOrder.removeAll { $0 == scope }
                storeOrder.append(scope)
            } else {
                let removed = cache.remove(scope)
                #expect((removed != nil) == (reference[scope] != nil), "step \(step)")
                reference[scope] = nil
                storeOrder.removeAll { $0 == scope }
            }
            #expect(cache.count == reference.count, "step \(step)")
            #expect(cache.scopesInStoreOrder == storeOrder, "step \(step)")
            #expect(cache.peek(scope)?.token.fingerprint == reference[scope], "step \(step)")
            #expect(cache.count <= 300)
        }
        for index in 0..<500 {
            let scope = AuthorizationScope.vehicle("v-\(index)")
            #expect(cache.peek(scope)?.token.fingerprint == reference[scope], "v-\(index)")
            #expect(cache.use(scope, at: 0)?.token.fingerprint == reference[scope])
        }
        #expect(Set(cache.scopes) == Set(reference.keys))
    }
}
