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

    /// One cached scope's entry and version. A class, so that a lookup records into it in
    /// place; lookups before the refresh window never reach it (see ``Hot``).
    private final class Slot: @unchecked Sendable {
        // Safe because a slot lives in one cache, which only its shard's lock lets anyone
        // touch; `version` alone is read without it, and it is an atomic word.
        var entry: Entry
        /// Bumped on every change that must stop threads serving their copies of the
        /// token (``ThreadTokenCache``): a new entry, removal, eviction, a cleared
        /// reference bit. Written only under the shard's lock.
        let version = AtomicWord()

        init(entry: Entry) {
            self.entry = entry
        }

        func bumpVersion() {
            version.storeReleasing(version.loadRelaxed() &+ 1)
        }
    }

    /// What a lookup before the token's refresh window needs, for every position of the
    /// ring, side by side in one array: such a lookup reads its index bucket and this
    /// record, nothing else, so a lookup spread over many scopes misses on two small,
    /// dense arrays instead of objects scattered over the heap.
    private struct Hot {
        /// The scope at this position; `nil` when the position is free.
        var scope: AuthorizationScope?
        /// The token's value, held here so that a lookup handing out only the value touches
        /// neither the slot nor the token's storage.
        var value: String
        /// Where the token's full refresh window starts (uptime): before it, a lookup is
        /// fresh and records nothing.
        var watchFrom: TimeInterval
        /// The CLOCK reference bit.
        var referenced: Bool

        static let free = Hot(scope: nil, value: "", watchFrom: -.infinity, referenced: false)

        init(scope: AuthorizationScope?, value: String, watchFrom: TimeInterval, referenced: Bool) {
            self.scope = scope
            self.value = value
            self.watchFrom = watchFrom
            self.referenced = referenced
        }

        init(scope: AuthorizationScope, entry: Entry) {
            self.init(scope: scope, value: entry.token.value, watchFrom: entry.watchFrom, referenced: false)
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
    /// The ring the clock hand walks, in two parallel arrays: each position's entry (`nil`
    /// when free) and its ``Hot`` record.
    private var slots: [Slot?] = []
    private var hot: [Hot] = []
    /// Where each scope's position is.
    private var positions = ScopeIndex()
    private var freePositions: [Int] = []
    private var hand = 0

    /// Creates an empty cache holding at most `capacity` entries (at least one).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many scopes have an entry.
    package var count: Int { positions.count }

    /// The scopes that have an entry.
    package var scopes: [AuthorizationScope] { hot.compactMap(\.scope) }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor,
    /// marking the entry as used so eviction passes it over once, and recording the lookup
    /// when it falls in the entry's refresh window. Nothing else is copied or written.
    @inline(__always)
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let position = markUsed(scope) else { return nil }
        let slot = slots[position].unsafelyUnwrapped
        if now >= slot.entry.watchFrom { slot.entry.recordLookup(at: now) }
        return (slot.entry.token, slot.entry.freshness(at: now), now < slot.entry.floorAt)
    }

    /// The value of `scope`'s token if ``use(_:at:)`` finds it fresh at `now`, marking and
    /// recording the lookup the same way; `nil` otherwise. Both are idempotent at one
    /// `now`, so a caller may follow a `nil` with ``use(_:at:)``. Before the refresh window
    /// it reads only the index and the position's ``Hot`` record.
    @inline(__always)
    package mutating func useFreshValue(_ scope: AuthorizationScope, at now: TimeInterval) -> String? {
        guard let position = markUsed(scope) else { return nil }
        if now < hot[position].watchFrom { return hot[position].value }
        let slot = slots[position].unsafelyUnwrapped
        slot.entry.recordLookup(at: now)
        return slot.entry.freshness(at: now) == .fresh ? hot[position].value : nil
    }

    /// The position of `scope`'s entry, its reference bit set (written only when it was
    /// clear); `nil` when `scope` has no entry.
    @inline(__always)
    private mutating func markUsed(_ scope: AuthorizationScope) -> Int? {
        guard let position = positions.position(of: scope, in: hot) else { return nil }
        if !hot[position].referenced { hot[position].referenced = true }
        return position
    }

    /// `scope`'s slot version, if its token may be copied at uptime `now`: it has an entry,
    /// marked as used, and `now` is before the refresh window.
    package func slotVersion(of scope: AuthorizationScope, at now: TimeInterval) -> SlotVersion? {
        guard let position = positions.position(of: scope, in: hot), hot[position].referenced,
            now < hot[position].watchFrom, let slot = slots[position]
        else { return nil }
        return SlotVersion(
            token: slot.entry.token, word: slot.version, value: slot.version.loadRelaxed(),
            validUntil: hot[position].watchFrom)
    }

    /// Evicts one entry other than `spared` the way a full cache does (the first the clock
    /// hand finds unreferenced); `nil` when there is no other entry.
    package mutating func evictOne(sparing spared: AuthorizationScope) -> AuthorizationScope? {
        guard positions.count > (positions.position(of: spared, in: hot) == nil ? 0 : 1) else { return nil }
        var victim = nextVictim()
        while hot[victim].scope == nil || hot[victim].scope == spared { victim = nextVictim() }
        let scope = hot[victim].scope!
        remove(scope)
        return scope
    }

    /// The entry for `scope`, without marking it as used.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        positions.position(of: scope, in: hot).flatMap { slots[$0]?.entry }
    }

    /// Stores `entry` for `scope`, replacing any earlier one.
    /// - Returns: the scope evicted to make room, if any.
    package mutating func store(_ entry: Entry, for scope: AuthorizationScope) -> AuthorizationScope? {
        if let position = positions.position(of: scope, in: hot) {
            slots[position]!.entry = entry
            hot[position].value = entry.token.value
            hot[position].watchFrom = entry.watchFrom
            slots[position]!.bumpVersion()
            return nil
        }
        var evicted: AuthorizationScope?
        let position: Int
        if let free = freePositions.popLast() {
            position = free
        } else if slots.count < capacity {
            slots.append(nil)
            hot.append(.free)
            position = slots.count - 1
        } else {
            position = nextVictim()
            evicted = hot[position].scope
            slots[position]!.bumpVersion()
            positions.remove(evicted!, in: hot)
        }
        slots[position] = Slot(entry: entry)
        hot[position] = Hot(scope: scope, entry: entry)
        positions.insert(scope, at: position)
        return evicted
    }

    /// Removes the entry for `scope`.
    /// - Returns: the removed entry, if there was one.
    @discardableResult
    package mutating func remove(_ scope: AuthorizationScope) -> Entry? {
        guard let position = positions.remove(scope, in: hot) else { return nil }
        slots[position]?.bumpVersion()
        let entry = slots[position]?.entry
        slots[position] = nil
        hot[position] = .free
        freePositions.append(position)
        return entry
    }

    /// Removes every entry.
    package mutating func removeAll() {
        for slot in slots { slot?.bumpVersion() }
        slots.removeAll()
        hot.removeAll()
        positions = ScopeIndex()
        freePositions.removeAll()
        hand = 0
    }

    /// The position of the entry to evict: the first one the hand finds with its reference
    /// bit clear (or a free position, which only ``evictOne(sparing:)`` can meet and skips).
    /// Bits it passes are cleared, each clearing bumping its slot's version, so two turns
    /// at most.
    private mutating func nextVictim() -> Int {
        while true {
            defer { hand = (hand + 1) % slots.count }
            guard hot[hand].scope != nil else { return hand }  // free: the caller skips it
            if hot[hand].referenced {
                hot[hand].referenced = false
                slots[hand]?.bumpVersion()
            } else {
                return hand
            }
        }
    }

    /// Where each scope's position is: open addressing with linear probing over the low 32
    /// bits of the scopes' precomputed hashes (``AuthorizationScope/hashCode``), so a
    /// lookup hashes nothing. A bucket is 8 bytes (the hash bits and the position), so the
    /// index of 100,000 scopes is 2 MB. It grows to keep at most half its buckets full;
    /// removal shifts later entries back, so no tombstones build up. The scopes themselves
    /// are in the ``Hot`` records, which every call passes in.
    private struct ScopeIndex {
        private struct Bucket {
            /// The low 32 bits of the scope's hash.
            var hash: UInt32
            /// The position plus one; 0 is an empty bucket.
            var stored: UInt32
        }

        private var buckets = Array(repeating: Bucket(hash: 0, stored: 0), count: 8)
        private var mask = 7
        private(set) var count = 0

        @inline(__always)
        private static func bits(of scope: AuthorizationScope) -> UInt32 {
            UInt32(truncatingIfNeeded: scope.hashCode)
        }

        /// The bucket holding `scope`, or the empty bucket where it would go.
        @inline(__always)
        private func bucket(of scope: AuthorizationScope, in hot: [Hot]) -> (index: Int, found: Bool) {
            let hash = Self.bits(of: scope)
            var index = Int(hash) & mask
            while true {
                let bucket = buckets[index]
                if bucket.stored == 0 { return (index, false) }
                if bucket.hash == hash, hot[Int(bucket.stored) - 1].scope?.sameIDs(as: scope) == true {
                    return (index, true)
                }
                index = (index + 1) & mask
            }
        }

        /// The position of `scope`'s entry, if it has one.
        @inline(__always)
        func position(of scope: AuthorizationScope, in hot: [Hot]) -> Int? {
            let (index, found) = bucket(of: scope, in: hot)
            return found ? Int(buckets[index].stored) - 1 : nil
        }

        /// Records that `scope`, which had no entry, is at `position`.
        mutating func insert(_ scope: AuthorizationScope, at position: Int) {
            if (count + 1) * 2 > buckets.count { grow() }
            let hash = Self.bits(of: scope)
            var index = Int(hash) & mask
            while buckets[index].stored != 0 { index = (index + 1) & mask }
            buckets[index] = Bucket(hash: hash, stored: UInt32(position + 1))
            count += 1
        }

        /// Forgets `scope`; returns the position its entry had.
        @discardableResult
        mutating func remove(_ scope: AuthorizationScope, in hot: [Hot]) -> Int? {
            var (hole, found) = bucket(of: scope, in: hot)
            guard found else { return nil }
            let position = Int(buckets[hole].stored) - 1
            // Shift back every later entry of the run that may move into the hole.
            var next = (hole + 1) & mask
            while buckets[next].stored != 0 {
                let home = Int(buckets[next].hash) & mask
                let movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
                if movable {
                    buckets[hole] = buckets[next]
                    hole = next
                }
                next = (next + 1) & mask
            }
            buckets[hole] = Bucket(hash: 0, stored: 0)
            count -= 1
            return position
        }

        private mutating func grow() {
            let old = buckets
            buckets = Array(repeating: Bucket(hash: 0, stored: 0), count: old.count * 2)
            mask = buckets.count - 1
            for bucket in old where bucket.stored != 0 {
                var index = Int(bucket.hash) & mask
                while buckets[index].stored != 0 { index = (index + 1) & mask }
                buckets[index] = bucket
            }
        }
    }
}
