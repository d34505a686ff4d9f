package import Foundation

/// The engine's token cache: a dictionary that, when full, evicts the scope stored longest
/// ago, found in the same few steps at any size. It has no lock of its own: it lives in
/// ``TokenEngineState``, behind the engine's.
package struct TokenCache {
    /// A cached token with the moments (uptimes) it turns stale, expiring and unusable. From
    /// ``watchFrom`` on, lookups are recorded and ``staleAt`` moves to the latest moment that
    /// leaves the gap between lookups plus the fetch allowance before the outage reserve.
    package struct Entry: Sendable {
        package let token: AuthToken
        /// Where the full refresh window starts (uptime); never stale before it.
        package let watchFrom: TimeInterval
        /// When a lookup should start a background refresh (uptime).
        package private(set) var staleAt: TimeInterval
        /// When the token has too little life left to hand out (uptime).
        package let expiringAt: TimeInterval
        /// When even a degraded serve must stop (uptime).
        package let floorAt: TimeInterval
        /// When the refresh must have started to ride out the policy's outage tolerance.
        private let reserveAt: TimeInterval
        /// The largest recent gap between lookups, decaying slowly.
        package private(set) var lookupInterval: TimeInterval
        private let allowance: TimeInterval
        private var lastLookup: TimeInterval?
        /// The latest moment the refresh may start, when spread (uptime).
        private var refreshBy = TimeInterval.infinity

        /// `allowance`: what the window leaves for fetching (infinite: the full window);
        /// `lookupInterval`: what the scope's previous token learned.
        package init(
            token: AuthToken, policy: RefreshPolicy, allowance: TimeInterval = .infinity,
            lookupInterval: TimeInterval = 0
        ) {
            self.token = token
            let expiresAt = token.expiresAtUptime ?? token.expiresAt.timeIntervalSince1970
            watchFrom = expiresAt - policy.refreshWindow(forLifetime: token.lifetime)
            expiringAt = expiresAt - policy.minimumRemaining(forLifetime: token.lifetime)
            floorAt = expiresAt - policy.lastUsableLife(forLifetime: token.lifetime)
            reserveAt = expiresAt - policy.outageReserve(forLifetime: token.lifetime)
            self.allowance = allowance
            self.lookupInterval = lookupInterval
            staleAt = watchFrom
            staleAt = adaptiveStaleAt()
        }

        /// Moves the refresh to a point `unit` (in `0...1`) of the way from `now` to the
        /// refresh moment, never later: the spread of a fleet whose tokens were minted together.
        package mutating func spreadRefresh(from now: TimeInterval, unit: Double) {
            refreshBy = now + max(0, staleAt - now) * min(max(unit, 0), 1)
            staleAt = adaptiveStaleAt()
        }

        /// The token's state at uptime `now`.
        package func freshness(at now: TimeInterval) -> RefreshPolicy.Freshness {
            now < staleAt ? .fresh : now < expiringAt ? .stale : .expiring
        }

        /// Records a lookup at uptime `now`, inside the full refresh window.
        mutating func recordLookup(at now: TimeInterval) {
            if let lastLookup, now > lastLookup {
                lookupInterval = max(now - lastLookup, lookupInterval * 0.9)
            }
            lastLookup = now
            staleAt = adaptiveStaleAt()
        }

        private func adaptiveStaleAt() -> TimeInterval {
            let margin = lookupInterval + allowance
            guard margin.isFinite else { return min(refreshBy, watchFrom) }
            return min(refreshBy, max(watchFrom, reserveAt - margin))
        }
    }

    /// One cached scope: its entry, and the store that put it there.
    private struct Slot {
        var entry: Entry
        let stored: UInt64

        /// Records the lookup and says what the token is worth now, in place (copying the
        /// entry out of the dictionary measured 250 more instructions per lookup).
        mutating func use(at now: TimeInterval) -> (AuthToken, RefreshPolicy.Freshness, Bool) {
            if now >= entry.watchFrom { entry.recordLookup(at: now) }
            return (entry.token, entry.freshness(at: now), now < entry.floorAt)
        }
    }

    package let capacity: Int
    private var slots: [AuthorizationScope: Slot] = [:]
    /// Scopes in the order they were stored, oldest from `head` on; an item whose slot was
    /// stored again or removed since is skipped when met, and such items are dropped once
    /// they outnumber the slots (see ``store(_:for:)``).
    private var order: [(scope: AuthorizationScope, stored: UInt64)] = []
    private var head = 0
    /// Counts stores: the order of ``Slot/stored``.
    private var stores: UInt64 = 0

    /// Creates an empty cache holding at most `capacity` entries (at least one).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    package var count: Int { slots.count }

    package var scopes: [AuthorizationScope] { Array(slots.keys) }

    /// The items of the store order kept now, stale ones included: for tests of its bound.
    package var bookkeepingCount: Int { order.count - head }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor.
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let index = slots.index(forKey: scope) else { return nil }
        return slots.values[index].use(at: now)
    }

    /// The entry for `scope`.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        slots[scope]?.entry
    }

    /// Stores `entry` for `scope`, replacing any earlier one. When the cache is full, the
    /// scope stored longest ago makes room: tokens live alike, so it is the one nearest its
    /// expiry, and finding it takes the same few steps at any size.
    /// - Returns: the scope evicted to make room and its entry, if any.
    package mutating func store(_ entry: Entry, for scope: AuthorizationScope)
        -> (scope: AuthorizationScope, entry: Entry)?
    {
        var evicted: (scope: AuthorizationScope, entry: Entry)?
        if slots[scope] == nil, slots.count >= capacity {
            while head < order.count {
                let (oldest, stored) = order[head]
                head += 1
                if let slot = slots[oldest], slot.stored == stored {
                    slots[oldest] = nil
                    evicted = (oldest, slot.entry)
                    break
                }
            }
        }
        stores &+= 1
        slots[scope] = Slot(entry: entry, stored: stores)
        order.append((scope, stores))
        // Items of replaced or removed slots pile up: drop them once they outnumber the
        // slots, which costs one pass per as many stores (constant per store on average).
        if order.count - head > 2 * slots.count + 64 {
            order = order[head...].filter { slots[$0.scope]?.stored == $0.stored }
            head = 0
        }
        return evicted
    }

    /// Removes the entry for `scope`.
    /// - Returns: the removed entry, if there was one.
    @discardableResult
    package mutating func remove(_ scope: AuthorizationScope) -> Entry? {
        slots.removeValue(forKey: scope)?.entry
    }

    package mutating func removeAll() {
        slots.removeAll()
        order.removeAll()
        head = 0
    }
}
