package import Foundation

/// The engine's token cache: a dictionary bounded by CLOCK (second-chance) eviction. A hit
/// marks its entry used; a full cache walks a hand over the entries in the order they were
/// stored, clearing marks, and evicts the first unmarked one. It has no lock of its own:
/// it lives in ``TokenEngineState``, behind the engine's.
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

        /// Creates an entry; `allowance` is what the window leaves for fetching (infinite for
        /// the full window), `lookupInterval` what the scope's previous token learned.
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

        /// Records a lookup at uptime `now` if it falls inside the full refresh window.
        package mutating func recordLookup(at now: TimeInterval) {
            guard now >= watchFrom else { return }
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

    /// One cached scope: its entry, its mark, and its place on the hand's ring.
    private struct Slot {
        var entry: Entry
        var used = false
        let position: Int

        /// Marks the slot used, records the lookup, and says what the token is worth now.
        mutating func use(at now: TimeInterval) -> (AuthToken, RefreshPolicy.Freshness, Bool) {
            used = true
            if now >= entry.watchFrom { entry.recordLookup(at: now) }
            return (entry.token, entry.freshness(at: now), now < entry.floorAt)
        }
    }

    /// The most entries kept.
    package let capacity: Int
    private var slots: [AuthorizationScope: Slot] = [:]
    /// The scopes in the order the hand walks; `nil` where one was removed.
    private var ring: [AuthorizationScope?] = []
    private var freePositions: [Int] = []
    private var hand = 0

    /// Creates an empty cache holding at most `capacity` entries (at least one).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many scopes have an entry.
    package var count: Int { slots.count }

    /// The scopes that have an entry.
    package var scopes: [AuthorizationScope] { Array(slots.keys) }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor;
    /// marks the entry used.
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let index = slots.index(forKey: scope) else { return nil }
        return slots.values[index].use(at: now)
    }

    /// The entry for `scope`, without marking it as used.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        slots[scope]?.entry
    }

    /// Stores `entry` for `scope`, replacing any earlier one.
    /// - Returns: the scope evicted to make room, if any.
    package mutating func store(_ entry: Entry, for scope: AuthorizationScope) -> AuthorizationScope? {
        if slots[scope] != nil {
            slots[scope]?.entry = entry
            return nil
        }
        var evicted: AuthorizationScope?
        if slots.count >= capacity {
            let victim = nextVictim()
            remove(victim)
            evicted = victim
        }
        let position: Int
        if let free = freePositions.popLast() {
            position = free
            ring[position] = scope
        } else {
            position = ring.count
            ring.append(scope)
        }
        slots[scope] = Slot(entry: entry, position: position)
        return evicted
    }

    /// Removes the entry for `scope`.
    /// - Returns: the removed entry, if there was one.
    @discardableResult
    package mutating func remove(_ scope: AuthorizationScope) -> Entry? {
        guard let slot = slots.removeValue(forKey: scope) else { return nil }
        ring[slot.position] = nil
        freePositions.append(slot.position)
        return slot.entry
    }

    /// Removes every entry.
    package mutating func removeAll() {
        slots.removeAll()
        ring.removeAll()
        freePositions.removeAll()
        hand = 0
    }

    /// The first scope the hand finds unmarked, clearing the marks it passes.
    private mutating func nextVictim() -> AuthorizationScope {
        while true {
            defer { hand = (hand + 1) % ring.count }
            guard let scope = ring[hand] else { continue }
            if slots[scope]?.used == true {
                slots[scope]?.used = false
            } else {
                return scope
            }
        }
    }
}
