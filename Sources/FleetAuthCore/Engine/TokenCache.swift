package import Foundation

/// The engine's token cache: entries packed in an array, found through an open-addressed
/// table of slot numbers and linked in the order they were stored, so that a full cache
/// evicts the scope stored longest ago in the same few steps at any size. It has no lock of
/// its own: it lives in ``TokenEngineState``, behind the engine's.
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
            now < staleAt ? .fresh : isInUse(at: now) ? .stale : .expiring
        }

        /// Whether the token still has its minimum remaining life at uptime `now`: it is
        /// handed out, and the state shows it. The one rule for "in use".
        package func isInUse(at now: TimeInterval) -> Bool { now <= expiringAt }

        /// A moment (uptime) the token is no longer in use, a millisecond past ``expiringAt``
        /// (it is in use up to that moment inclusive): when the clock alone has ended its use.
        package var endOfUse: TimeInterval { expiringAt + 0.001 }

        /// Whether the token is above its outage floor at uptime `now`: through a transient
        /// failure it is still handed out, degraded. The one rule for "usable in an outage".
        package func isAboveFloor(at now: TimeInterval) -> Bool { now < floorAt }

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

    /// One cached scope: its entry and its neighbours in the store order (slot numbers, -1
    /// for none). Numbers are 32-bit: at 100,000 entries each byte of a slot costs 1.3 bytes
    /// per vehicle (the array doubles as it grows), and each byte of a place in the index 2.6.
    private struct Slot {
        var entry: Entry
        /// The slot stored just before this one, and just after.
        var older: Int32
        var newer: Int32

        /// Records the lookup and says what the token is worth now, in place (copying the
        /// entry out measured 250 more instructions per lookup).
        mutating func use(at now: TimeInterval) -> (AuthToken, RefreshPolicy.Freshness, Bool) {
            if now >= entry.watchFrom { entry.recordLookup(at: now) }
            return (entry.token, entry.freshness(at: now), entry.isAboveFloor(at: now))
        }
    }

    /// The most entries kept; at most `Int32.max`, what a slot number holds.
    package let capacity: Int
    /// Each cached scope's slot number, at the place its hash names or the first free one
    /// after it (-1: free); a power of two of places, at most half of them taken. A scope
    /// is compared with its slot's token, so a place takes 4 bytes, not a copy of the
    /// scope: a dictionary of scopes took 115 bytes per vehicle at 100,000, this takes 10.
    private var index: [Int32] = []
    /// The entries, packed: the last one moves into the place of one removed.
    private var slots: [Slot] = []
    /// The ends of the store order: the slot stored longest ago and the one stored last.
    private var oldest: Int32 = -1
    private var newest: Int32 = -1

    /// Creates an empty cache holding at most `capacity` entries (at least one).
    package init(capacity: Int) {
        self.capacity = min(max(1, capacity), Int(Int32.max))
    }

    package var count: Int { slots.count }

    package var scopes: [AuthorizationScope] { slots.map(\.entry.token.scope) }

    /// The scopes from the one stored longest ago to the one stored last: for tests of
    /// the order's links.
    package var scopesInStoreOrder: [AuthorizationScope] {
        var scopes: [AuthorizationScope] = []
        var next = oldest
        while next >= 0, scopes.count < slots.count {
            scopes.append(slots[Int(next)].entry.token.scope)
            next = slots[Int(next)].newer
        }
        return scopes
    }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor.
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let slot = find(scope)?.slot else { return nil }
        return slots[Int(slot)].use(at: now)
    }

    /// The entry for `scope`.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        find(scope).map { slots[Int($0.slot)].entry }
    }

    /// Stores `entry` under its token's scope, replacing any earlier one; the entry is then
    /// the newest in the store order. When the cache is full, the scope stored longest ago
    /// makes room: tokens live alike, so it is the one nearest its expiry, and finding it
    /// takes the same few steps at any size.
    /// - Returns: the scope evicted to make room and its entry, if any.
    package mutating func store(_ entry: Entry) -> (scope: AuthorizationScope, entry: Entry)? {
        let scope = entry.token.scope
        if let slot = find(scope)?.slot {
            unlink(slot)
            slots[Int(slot)].entry = entry
            append(slot)
            return nil
        }
        var evicted: (scope: AuthorizationScope, entry: Entry)?
        if slots.count >= capacity {
            let oldestScope = slots[Int(oldest)].entry.token.scope
            evicted = remove(oldestScope).map { (oldestScope, $0) }
        }
        if 2 * (slots.count + 1) > index.count { growIndex() }
        let slot = Int32(slots.count)
        slots.append(Slot(entry: entry, older: -1, newer: -1))
        append(slot)
        index[place(of: scope)] = slot
        return evicted
    }

    /// Removes the entry for `scope`.
    /// - Returns: the removed entry, if there was one.
    @discardableResult
    package mutating func remove(_ scope: AuthorizationScope) -> Entry? {
        guard let (place, slot) = find(scope) else { return nil }
        freePlace(place)
        unlink(slot)
        let removed = slots[Int(slot)].entry
        let last = Int32(slots.count - 1)
        if slot != last {
            // The last slot moves into the gap: its neighbours and the index follow it.
            let moved = slots[Int(last)]
            slots[Int(slot)] = moved
            if moved.older >= 0 { slots[Int(moved.older)].newer = slot } else { oldest = slot }
            if moved.newer >= 0 { slots[Int(moved.newer)].older = slot } else { newest = slot }
            index[self.place(of: moved.entry.token.scope)] = slot
        }
        slots.removeLast()
        return removed
    }

    package mutating func removeAll() {
        index = []
        slots.removeAll()
        (oldest, newest) = (-1, -1)
    }

    /// Takes `slot` out of the store order.
    private mutating func unlink(_ slot: Int32) {
        let (older, newer) = (slots[Int(slot)].older, slots[Int(slot)].newer)
        if older >= 0 { slots[Int(older)].newer = newer } else { oldest = newer }
        if newer >= 0 { slots[Int(newer)].older = older } else { newest = older }
    }

    /// Puts `slot` at the new end of the store order.
    private mutating func append(_ slot: Int32) {
        slots[Int(slot)].older = newest
        slots[Int(slot)].newer = -1
        if newest >= 0 { slots[Int(newest)].newer = slot } else { oldest = slot }
        newest = slot
    }

    /// Where `scope` is in the index, and the slot that holds its entry.
    private func find(_ scope: AuthorizationScope) -> (place: Int, slot: Int32)? {
        guard !index.isEmpty else { return nil }
        let place = place(of: scope)
        return index[place] >= 0 ? (place, index[place]) : nil
    }

    /// Where `scope` is in the (not empty) index, or the free place where it would go.
    private func place(of scope: AuthorizationScope) -> Int {
        let mask = index.count - 1
        var place = scope.hashValue & mask
        while index[place] >= 0, slots[Int(index[place])].entry.token.scope != scope {
            place = (place + 1) & mask
        }
        return place
    }

    /// Frees `place` and moves back the slots after it that a free place there would
    /// hide from their scope's search (each to the earliest place its search reaches).
    private mutating func freePlace(_ place: Int) {
        let mask = index.count - 1
        var free = place
        var next = (place + 1) & mask
        while index[next] >= 0 {
            let home = slots[Int(index[next])].entry.token.scope.hashValue & mask
            // Its search runs from `home` to `next`: if it passes `free`, it may move there.
            if (next - home) & mask >= (next - free) & mask {
                index[free] = index[next]
                free = next
            }
            next = (next + 1) & mask
        }
        index[free] = -1
    }

    /// Doubles the index (16 places at first) and places every slot again.
    private mutating func growIndex() {
        index = Array(repeating: -1, count: max(16, 2 * index.count))
        for slot in slots.indices { index[place(of: slots[slot].entry.token.scope)] = Int32(slot) }
    }
}
