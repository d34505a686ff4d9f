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
        /// The token's value, held here too so that a lookup handing out only the value
        /// does not touch the token's storage.
        package let value: String
        /// Where the full refresh window starts (uptime); never stale before it.
        package let watchFrom: TimeInterval
        /// When a lookup should start a background refresh (uptime).
        package private(set) var staleAt: TimeInterval
        /// When the token has too little life left to hand out (uptime).
        package let expiringAt: TimeInterval
        /// When the token has too little life left to hand out even during an outage
        /// (uptime): at `RefreshPolicy.outageFloor`, or ``expiringAt`` when strict.
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
            value = token.value
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

    /// One cached scope. A class, so that a lookup reads and marks it in place: nothing is
    /// copied but the token handed out.
    private final class Slot: @unchecked Sendable {
        // Safe because a slot lives in one cache, which only its shard's lock lets anyone
        // touch; `version` alone is read without it, and it is an atomic word.
        // The fields a lookup reads come first, in declaration order, so that they share
        // as few cache lines as they can: a lookup over many scopes misses on each.
        var referenced = false {
            didSet { if !referenced { bumpVersion() } }
        }
        /// Where the slot is in the ring.
        let position: Int
        let scope: AuthorizationScope
        var entry: Entry
        /// Bumped on every change that must stop threads serving their copies of the
        /// token (``ThreadTokenCache``): a new entry, removal, eviction, a cleared
        /// reference bit. Written only under the shard's lock.
        let version = AtomicWord()

        init(scope: AuthorizationScope, entry: Entry, position: Int) {
            self.scope = scope
            self.entry = entry
            self.position = position
        }

        func bumpVersion() {
            version.storeReleasing(version.loadRelaxed() &+ 1)
        }
    }

    /// What a thread needs to serve its own copy of a slot's token: the token, the slot's
    /// version word, its value now, and the start of the token's refresh window, before
    /// which a lookup changes nothing in the slot.
    package struct SlotVersion {
        let token: AuthToken
        let word: AtomicWord
        let value: Int
        let validUntil: TimeInterval
    }

    /// The most entries kept.
    package let capacity: Int
    /// The ring the clock hand walks; a `nil` slot is free.
    private var slots: [Slot?] = []
    /// Where each scope's slot is.
    private var positions: ScopeIndex
    private var freePositions: [Int] = []
    private var hand = 0

    /// Creates an empty cache holding at most `capacity` entries (at least one).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
        positions = ScopeIndex()
    }

    /// How many scopes have an entry.
    package var count: Int { positions.count }

    /// The scopes that have an entry.
    package var scopes: [AuthorizationScope] { slots.compactMap { $0?.scope } }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor,
    /// marking the entry as used so eviction passes it over once, and recording the lookup
    /// when it falls in the entry's refresh window. Nothing else is copied or written.
    @inline(__always)
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let found = positions.slot(of: scope) else { return nil }
        return found._withUnsafeGuaranteedRef { slot in
            if !slot.referenced { slot.referenced = true }
            if now >= slot.entry.watchFrom { slot.entry.recordLookup(at: now) }
            return (slot.entry.token, slot.entry.freshness(at: now), now < slot.entry.floorAt)
        }
    }

    /// `scope`'s slot version, if its token may be copied at uptime `now`: it has an entry,
    /// marked as used, and `now` is before the refresh window.
    package func slotVersion(of scope: AuthorizationScope, at now: TimeInterval) -> SlotVersion? {
        guard let found = positions.slot(of: scope) else { return nil }
        return found._withUnsafeGuaranteedRef { slot in
            guard slot.referenced, now < slot.entry.watchFrom else { return nil }
            return SlotVersion(
                token: slot.entry.token, word: slot.version, value: slot.version.loadRelaxed(),
                validUntil: slot.entry.watchFrom)
        }
    }

    /// The value of `scope`'s token if ``use(_:at:)`` finds it fresh at `now`, marking and
    /// recording the lookup the same way; `nil` otherwise. Both are idempotent at one
    /// `now`, so a caller may follow a `nil` with ``use(_:at:)``.
    @inline(__always)
    package mutating func useFreshValue(_ scope: AuthorizationScope, at now: TimeInterval) -> String? {
        guard let found = positions.slot(of: scope) else { return nil }
        return found._withUnsafeGuaranteedRef { slot in
            if !slot.referenced { slot.referenced = true }
            if now >= slot.entry.watchFrom { slot.entry.recordLookup(at: now) }
            return slot.entry.freshness(at: now) == .fresh ? slot.entry.value : nil
        }
    }

    /// Evicts one entry other than `spared` the way a full cache does (the first the clock
    /// hand finds unreferenced); `nil` when there is no other entry.
    package mutating func evictOne(sparing spared: AuthorizationScope) -> AuthorizationScope? {
        guard positions.count > (positions.position(of: spared) == nil ? 0 : 1) else { return nil }
        var victim = nextVictim()
        while slots[victim] == nil || slots[victim]!.scope == spared { victim = nextVictim() }
        let scope = slots[victim]!.scope
        remove(scope)
        return scope
    }

    /// The entry for `scope`, without marking it as used.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        positions.position(of: scope).flatMap { slots[$0]?.entry }
    }

    /// Stores `entry` for `scope`, replacing any earlier one.
    /// - Returns: the scope evicted to make room, if any.
    package mutating func store(_ entry: Entry, for scope: AuthorizationScope) -> AuthorizationScope? {
        if let position = positions.position(of: scope) {
            slots[position]!.entry = entry
            slots[position]!.bumpVersion()
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
            slots[position]!.bumpVersion()
            positions.remove(evicted!)
        }
        let slot = Slot(scope: scope, entry: entry, position: position)
        slots[position] = slot
        positions.insert(slot)
        return evicted
    }

    /// Removes the entry for `scope`.
    /// - Returns: the removed entry, if there was one.
    @discardableResult
    package mutating func remove(_ scope: AuthorizationScope) -> Entry? {
        guard let position = positions.remove(scope) else { return nil }
        slots[position]?.bumpVersion()
        let entry = slots[position]?.entry
        slots[position] = nil
        freePositions.append(position)
        return entry
    }

    /// Removes every entry.
    package mutating func removeAll() {
        for slot in slots { slot?.bumpVersion() }
        slots.removeAll()
        positions = ScopeIndex()
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
                slot.referenced = false
            } else {
                return hand
            }
        }
    }

    /// Where each scope's slot is: open addressing with linear probing over the scopes'
    /// precomputed hashes (``AuthorizationScope/hashCode``), so a lookup hashes nothing. A
    /// bucket is 16 bytes, the hash and the slot itself, so a probe reads one cache line and
    /// a hit goes straight to its slot (kept alive by `slots`; the slot knows its position).
    /// It grows to keep at most half its buckets full; removal shifts later entries back,
    /// so no tombstones build up.
    private struct ScopeIndex {
        private struct Bucket {
            /// The scope's hash.
            var hash: Int
            /// The slot, unretained: `slots` owns it for as long as the bucket names it;
            /// `nil` for an empty bucket.
            var slot: Unmanaged<Slot>?
        }

        private var buckets: [Bucket]
        private var mask: Int
        private(set) var count = 0

        init() {
            buckets = Array(repeating: Bucket(hash: 0, slot: nil), count: 8)
            mask = 7
        }

        /// The bucket holding `scope`, or the empty bucket where it would go.
        @inline(__always)
        private func bucket(of scope: AuthorizationScope) -> (index: Int, found: Bool) {
            let hash = scope.hashCode
            var index = hash & mask
            while true {
                let bucket = buckets[index]
                guard let slot = bucket.slot else { return (index, false) }
                if bucket.hash == hash, slot._withUnsafeGuaranteedRef({ $0.scope.sameIDs(as: scope) }) {
                    return (index, true)
                }
                index = (index + 1) & mask
            }
        }

        /// `scope`'s slot, if it has one.
        @inline(__always)
        func slot(of scope: AuthorizationScope) -> Unmanaged<Slot>? {
            let (index, found) = bucket(of: scope)
            return found ? buckets[index].slot : nil
        }

        /// The position of `scope`'s slot, if it has one.
        @inline(__always)
        func position(of scope: AuthorizationScope) -> Int? {
            slot(of: scope)?._withUnsafeGuaranteedRef { $0.position }
        }

        /// Records `slot`, whose scope had none.
        mutating func insert(_ slot: Slot) {
            if (count + 1) * 2 > buckets.count { grow() }
            var index = slot.scope.hashCode & mask
            while buckets[index].slot != nil { index = (index + 1) & mask }
            buckets[index] = Bucket(hash: slot.scope.hashCode, slot: .passUnretained(slot))
            count += 1
        }

        /// Forgets `scope`; returns the position its slot had.
        @discardableResult
        mutating func remove(_ scope: AuthorizationScope) -> Int? {
            var (hole, found) = bucket(of: scope)
            guard found, let removed = buckets[hole].slot else { return nil }
            let position = removed._withUnsafeGuaranteedRef { $0.position }
            // Shift back every later entry of the run that may move into the hole.
            var next = (hole + 1) & mask
            while buckets[next].slot != nil {
                let home = buckets[next].hash & mask
                let movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
                if movable {
                    buckets[hole] = buckets[next]
                    hole = next
                }
                next = (next + 1) & mask
            }
            buckets[hole] = Bucket(hash: 0, slot: nil)
            count -= 1
            return position
        }

        private mutating func grow() {
            let old = buckets
            buckets = Array(repeating: Bucket(hash: 0, slot: nil), count: old.count * 2)
            mask = buckets.count - 1
            for bucket in old where bucket.slot != nil {
                var index = bucket.hash & mask
                while buckets[index].slot != nil { index = (index + 1) & mask }
                buckets[index] = bucket
            }
        }
    }
}
