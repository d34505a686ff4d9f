package import Foundation

/// The engine's token cache: one entry per scope, bounded, with CLOCK (second-chance)
/// eviction.
///
/// It has no lock and no clock of its own: ``TokenEngine`` keeps it inside its locked
/// state, so a lookup and the decision that follows it are one atomic step. Every
/// operation is O(1) (eviction amortized): a hit sets the scope's reference bit, written
/// only when it was clear, and records its time only inside the token's refresh window;
/// a full cache evicts the first entry the clock hand finds unreferenced, clearing the
/// bits it passes. Scopes are found in a ``ScopeTable`` whose records hold what a lookup
/// before the refresh window needs; the entries sit in slots along the ring the hand
/// walks. The table and the slots are objects: a copy of the cache shares them, so the
/// engine keeps exactly one per shard and never copies it.
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

    /// One cached scope's entry and version, at one position of the ring. A class, so that
    /// a lookup records into it in place; lookups before the refresh window never reach it
    /// (the scope's ``ScopeTable/Record`` has what they need).
    private final class Slot: @unchecked Sendable {
        // Safe because a slot lives in one cache, which only its shard's lock lets anyone
        // touch; `version` alone is read without it, and it is an atomic word.
        var entry: Entry
        /// Bumped on every change that must stop threads serving their copies of the
        /// token (``ThreadTokenCache``): a new entry, removal, eviction, a cleared
        /// reference bit. Written only under the shard's lock.
        let version = AtomicWord()
        /// The table bucket holding the scope's record, kept current as records move.
        var bucket: Int

        init(entry: Entry, bucket: Int) {
            self.entry = entry
            self.bucket = bucket
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
    /// The ring the clock hand walks: each position's slot, `nil` when free.
    private var slots: [Slot?] = []
    /// Each cached scope's record, found by the scope.
    private let table = ScopeTable()
    private var freePositions: [Int] = []
    private var hand = 0

    /// Creates an empty cache holding at most `capacity` entries (at least one, at most
    /// ``ScopeTable/maximumPositions``).
    package init(capacity: Int) {
        self.capacity = min(max(1, capacity), ScopeTable.maximumPositions)
    }

    /// How many scopes have an entry.
    package var count: Int { table.count }

    /// Where the scopes' records are (``ScopeTable/location``), for lookups to prefetch.
    var recordLocation: AtomicWord { table.location }

    /// The scopes that have an entry.
    package var scopes: [AuthorizationScope] { table.scopes }

    /// The token for `scope`, its state at `now` and whether it is above its outage floor,
    /// marking the entry as used so eviction passes it over once, and recording the lookup
    /// when it falls in the entry's refresh window. Nothing else is copied or written.
    @inline(__always)
    package mutating func use(_ scope: AuthorizationScope, at now: TimeInterval)
        -> (token: AuthToken, freshness: RefreshPolicy.Freshness, aboveFloor: Bool)?
    {
        guard let record = markUsed(scope) else { return nil }
        let slot = slots[record.pointee.position].unsafelyUnwrapped
        if now >= slot.entry.watchFrom { slot.entry.recordLookup(at: now) }
        return (slot.entry.token, slot.entry.freshness(at: now), now < slot.entry.floorAt)
    }

    /// The value of `scope`'s token if ``use(_:at:)`` finds it fresh at `now`, marking and
    /// recording the lookup the same way; `nil` otherwise. Both are idempotent at one
    /// `now`, so a caller may follow a `nil` with ``use(_:at:)``. Before the refresh window
    /// it reads only the scope's record.
    @inline(__always)
    package mutating func useFreshValue(_ scope: AuthorizationScope, at now: TimeInterval) -> String? {
        guard let record = markUsed(scope) else { return nil }
        if now < record.pointee.watchFrom { return record.pointee.value }
        let slot = slots[record.pointee.position].unsafelyUnwrapped
        slot.entry.recordLookup(at: now)
        return slot.entry.freshness(at: now) == .fresh ? record.pointee.value : nil
    }

    /// `scope`'s record, its reference bit set (written only when it was clear); `nil`
    /// when `scope` has no entry.
    @inline(__always)
    private func markUsed(_ scope: AuthorizationScope) -> UnsafeMutablePointer<ScopeTable.Record>? {
        guard let bucket = table.bucket(of: scope) else { return nil }
        let record = table.record(at: bucket)
        if !record.pointee.isReferenced { record.pointee.word |= ScopeTable.Record.referencedBit }
        return record
    }

    /// `scope`'s slot version, if its token may be copied at uptime `now`: it has an entry,
    /// marked as used, and `now` is before the refresh window.
    package func slotVersion(of scope: AuthorizationScope, at now: TimeInterval) -> SlotVersion? {
        guard let bucket = table.bucket(of: scope) else { return nil }
        let record = table.record(at: bucket).pointee
        guard record.isReferenced, now < record.watchFrom, let slot = slots[record.position] else { return nil }
        return SlotVersion(
            token: slot.entry.token, word: slot.version, value: slot.version.loadRelaxed(),
            validUntil: record.watchFrom)
    }

    /// Evicts one entry other than `spared` the way a full cache does (the first the clock
    /// hand finds unreferenced); `nil` when there is no other entry.
    package mutating func evictOne(sparing spared: AuthorizationScope) -> AuthorizationScope? {
        let sparedBucket = table.bucket(of: spared)
        guard table.count > (sparedBucket == nil ? 0 : 1) else { return nil }
        var victim = nextVictim()
        while slots[victim] == nil || slots[victim]?.bucket == sparedBucket { victim = nextVictim() }
        let scope = scopeOfEntry(at: victim)
        removeEntry(at: victim)
        return scope
    }

    /// The entry for `scope`, without marking it as used.
    package func peek(_ scope: AuthorizationScope) -> Entry? {
        table.bucket(of: scope).flatMap { slots[table.record(at: $0).pointee.position]?.entry }
    }

    /// Stores `entry` for `scope`, replacing any earlier one.
    /// - Returns: the scope evicted to make room, if any.
    package mutating func store(_ entry: Entry, for scope: AuthorizationScope) -> AuthorizationScope? {
        if let bucket = table.bucket(of: scope) {
            let record = table.record(at: bucket)
            let slot = slots[record.pointee.position].unsafelyUnwrapped
            slot.entry = entry
            record.pointee.value = entry.token.value
            record.pointee.watchFrom = entry.watchFrom
            slot.bumpVersion()
            return nil
        }
        var evicted: AuthorizationScope?
        if freePositions.isEmpty, slots.count == capacity {
            let victim = nextVictim()
            evicted = scopeOfEntry(at: victim)
            removeEntry(at: victim)
        }
        let position: Int
        if let free = freePositions.popLast() {
            position = free
        } else {
            slots.append(nil)
            position = slots.count - 1
        }
        let slot = Slot(entry: entry, bucket: 0)
        slots[position] = slot
        slot.bucket = table.insert(
            scope, position: position, value: entry.token.value, watchFrom: entry.watchFrom, moved: moveSlot)
        return evicted
    }

    /// Removes the entry for `scope`.
    /// - Returns: the removed entry, if there was one.
    @discardableResult
    package mutating func remove(_ scope: AuthorizationScope) -> Entry? {
        guard let bucket = table.bucket(of: scope) else { return nil }
        return removeEntry(at: table.record(at: bucket).pointee.position)
    }

    /// Removes the entry at `position`, which has one: its version bumped (threads' copies
    /// stop serving), its record gone from the table, the position free for the next store.
    @discardableResult
    private mutating func removeEntry(at position: Int) -> Entry {
        let slot = slots[position].unsafelyUnwrapped
        slot.bumpVersion()
        table.remove(at: slot.bucket, moved: moveSlot)
        slots[position] = nil
        freePositions.append(position)
        return slot.entry
    }

    /// The scope of the entry at `position`, which has one.
    private func scopeOfEntry(at position: Int) -> AuthorizationScope {
        table.record(at: slots[position].unsafelyUnwrapped.bucket).pointee.scope
    }

    /// Removes every entry.
    package mutating func removeAll() {
        for slot in slots { slot?.bumpVersion() }
        slots.removeAll()
        table.removeAll()
        freePositions.removeAll()
        hand = 0
    }

    /// Tells the slot at `position` that its record moved to `bucket`.
    private func moveSlot(position: Int, bucket: Int) {
        slots[position]?.bucket = bucket
    }

    /// The position of the entry to evict: the first one the hand finds with its reference
    /// bit clear (or a free position, which only ``evictOne(sparing:)`` can meet and skips).
    /// Bits it passes are cleared, each clearing bumping its slot's version, so two turns
    /// at most.
    private mutating func nextVictim() -> Int {
        while true {
            defer { hand = (hand + 1) % slots.count }
            guard let slot = slots[hand] else { return hand }  // free: the caller skips it
            let record = table.record(at: slot.bucket)
            if record.pointee.isReferenced {
                record.pointee.word &= ~ScopeTable.Record.referencedBit
                slot.bumpVersion()
            } else {
                return hand
            }
        }
    }
}
