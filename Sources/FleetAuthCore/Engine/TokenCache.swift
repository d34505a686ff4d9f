package import Foundation

/// The engine's token cache: one entry per scope, bounded, with CLOCK (second-chance)
/// eviction.
///
/// It is a plain value with no lock and no clock of its own: ``TokenEngine`` keeps it
/// inside its locked state, so a lookup and the decision that follows it are one atomic
/// step. Every operation is O(1) (eviction amortized): a hit sets the entry's reference
/// bit, written only when it was clear, and records its time only inside the token's
/// refresh window; a full cache evicts the first entry the clock hand finds unreferenced,
/// clearing the bits it passes.
package struct TokenCache {
    /// A cached token with the moments it turns stale, expiring and unusable.
    ///
    /// Until ``watchFrom`` (the start of the policy's full refresh window) a lookup writes
    /// nothing. From then on each lookup is recorded, the gap between lookups is learned,
    /// and ``staleAt`` moves to the latest moment that still leaves that gap plus the
    /// fetch allowance before the token has only its outage reserve left
    /// (``RefreshPolicy/outageReserve(forLifetime:)``).
    package struct Entry: Sendable {
        package let token: AuthToken
        /// Where the full refresh window starts (uptime); never stale before it.
        package let watchFrom: TimeInterval
        /// When a lookup should start a background refresh (uptime).
        package private(set) var staleAt: TimeInterval
        /// When the token has too little life left to hand out (uptime).
        package let expiringAt: TimeInterval
        /// When the token has too little life left to hand out even during an outage
        /// (uptime): at ``RefreshPolicy/outageFloor``, or ``expiringAt`` when strict.
        package let floorAt: TimeInterval
        /// When the refresh must have started to ride out the policy's outage tolerance.
        private let reserveAt: TimeInterval
        /// The gap between lookups seen near the end of the token's life (the largest
        /// recent one, decaying slowly).
        package private(set) var lookupInterval: TimeInterval
        private let allowance: TimeInterval
        private var lastLookup: TimeInterval?

        /// Creates an entry. `allowance` is what the window leaves for fetching
        /// (``RefreshPolicy/adaptiveAllowance(slowestFetch:retry:randomUnit:)``; infinite
        /// for the full window); `lookupInterval` carries over what the scope's previous
        /// token learned. Times are on the monotonic clock: the token's
        /// ``AuthToken/expiresAtUptime`` (its wall expiry for a token without one).
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
            guard margin.isFinite else { return watchFrom }
            return max(watchFrom, reserveAt - margin)
        }
    }

    private struct Slot {
        var scope: AuthorizationScope
        var entry: Entry
        var referenced: Bool
    }

    /// The most entries kept.
    package let capacity: Int
    /// The ring the clock hand walks; a `nil` slot is free.
    private var slots: [Slot?] = []
    private var positions: [AuthorizationScope: Int] = [:]
    private var freePositions: [Int] = []
    private var hand = 0

    /// Creates an empty cache holding at most `capacity` entries (at least one).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many scopes have an entry.
    package var count: Int { positions.count }

    /// The scopes that have an entry.
    package var scopes: Dictionary<AuthorizationScope, Int>.Keys { positions.keys }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor,
    /// marking the entry as used so eviction passes it over once, and recording the lookup
    /// when it falls in the entry's refresh window. Nothing else is copied or written.
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let position = positions[scope] else { return nil }
        return slots.withUnsafeMutableBufferPointer { slots in
            if !slots[position]!.referenced { slots[position]!.referenced = true }
            if now >= slots[position]!.entry.watchFrom { slots[position]!.entry.recordLookup(at: now) }
            let entry = slots[position]!.entry
            return (entry.token, entry.freshness(at: now), now < entry.floorAt)
        }
    }

    /// Evicts one entry other than `spared` the way a full cache does (the first the clock
    /// hand finds unreferenced); `nil` when there is no other entry.
    package mutating func evictOne(sparing spared: AuthorizationScope) -> AuthorizationScope? {
        guard positions.count > (positions[spared] == nil ? 0 : 1) else { return nil }
        var victim = nextVictim()
        while slots[victim] == nil || slots[victim]!.scope == spared { victim = nextVictim() }
        let scope = slots[victim]!.scope
        remove(scope)
        return scope
    }

    /// The entry for `scope`, without marking it as used.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        positions[scope].flatMap { slots[$0]?.entry }
    }

    /// Stores `entry` for `scope`, replacing any earlier one.
    /// - Returns: the scope evicted to make room, if any.
    package mutating func store(_ entry: Entry, for scope: AuthorizationScope) -> AuthorizationScope? {
        if let position = positions[scope] {
            slots[position]!.entry = entry
            return nil
        }
        var evicted: AuthorizationScope?
        let position: Int
        if let free = freePositions.popLast() {
            position = free
        } else if slots.count < capacity {
            slots.append(nil)
            position = slots.count - 1
        } else {
            position = nextVictim()
            evicted = slots[position]!.scope
            positions[evicted!] = nil
        }
        slots[position] = Slot(scope: scope, entry: entry, referenced: false)
        positions[scope] = position
        return evicted
    }

    /// Removes the entry for `scope`.
    /// - Returns: the removed entry, if there was one.
    @discardableResult
    package mutating func remove(_ scope: AuthorizationScope) -> Entry? {
        guard let position = positions.removeValue(forKey: scope) else { return nil }
        let entry = slots[position]?.entry
        slots[position] = nil
        freePositions.append(position)
        return entry
    }

    /// Removes every entry.
    package mutating func removeAll() {
        slots.removeAll()
        positions.removeAll()
        freePositions.removeAll()
        hand = 0
    }

    /// The position of the entry to evict: the first one the hand finds with its reference
    /// bit clear (or a free slot, which only ``evictOne()`` can meet and skips). Bits it
    /// passes are cleared, so two turns at most.
    private mutating func nextVictim() -> Int {
        while true {
            defer { hand = (hand + 1) % slots.count }
            guard let slot = slots[hand] else { return hand }  // free: the caller skips it
            if slot.referenced {
                slots[hand]!.referenced = false
            } else {
                return hand
            }
        }
    }
}
