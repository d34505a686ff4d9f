package import Foundation

/// The engine's token cache: a dictionary that, when full, evicts the scope used least
/// recently. Finding it takes a walk over the entries, paid only by a store into a full
/// cache (a fetch), never by a lookup. It has no lock of its own: it lives in
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

    /// One cached scope: its entry, and when it was last stored or used.
    private struct Slot {
        var entry: Entry
        var lastUsed: UInt64

        /// Marks the slot used at `tick`, records the lookup, and says what the token is worth
        /// now, all in place (copying the entry out of the dictionary measured 250 more
        /// instructions per lookup).
        mutating func use(at now: TimeInterval, tick: UInt64) -> (AuthToken, RefreshPolicy.Freshness, Bool) {
            lastUsed = tick
            if now >= entry.watchFrom { entry.recordLookup(at: now) }
            return (entry.token, entry.freshness(at: now), now < entry.floorAt)
        }
    }

    package let capacity: Int
    private var slots: [AuthorizationScope: Slot] = [:]
    /// Counts stores and uses: the order of ``Slot/lastUsed``.
    private var tick: UInt64 = 0

    /// Creates an empty cache holding at most `capacity` entries (at least one).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    package var count: Int { slots.count }

    package var scopes: [AuthorizationScope] { Array(slots.keys) }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor;
    /// marks the entry used.
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let index = slots.index(forKey: scope) else { return nil }
        tick &+= 1
        return slots.values[index].use(at: now, tick: tick)
    }

    /// The entry for `scope`, without marking it as used.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        slots[scope]?.entry
    }

    /// Stores `entry` for `scope`, replacing any earlier one.
    /// - Returns: the scope evicted to make room, if any.
    package mutating func store(_ entry: Entry, for scope: AuthorizationScope) -> AuthorizationScope? {
        var evicted: AuthorizationScope?
        if slots[scope] == nil, slots.count >= capacity {
            evicted = slots.min { $0.value.lastUsed < $1.value.lastUsed }?.key
            if let evicted { slots[evicted] = nil }
        }
        tick &+= 1
        slots[scope] = Slot(entry: entry, lastUsed: tick)
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
    }
}
