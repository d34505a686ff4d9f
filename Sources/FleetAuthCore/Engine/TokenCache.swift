package import Foundation

/// The engine's token cache: one entry per scope, bounded, with CLOCK (second-chance)
/// eviction.
///
/// It is a plain value with no lock and no clock of its own: ``TokenEngine`` keeps it
/// inside its locked state, so a lookup and the decision that follows it are one atomic
/// step. Every operation is O(1) (eviction amortized): a hit sets the entry's reference
/// bit, written only when it was clear; a full cache evicts the first entry the clock hand
/// finds unreferenced, clearing the bits it passes.
package struct TokenCache {
    /// A cached token with the moments it turns stale and expiring, worked out once.
    package struct Entry: Sendable {
        package let token: AuthToken
        package let staleAt: Date
        package let expiringAt: Date

        package init(token: AuthToken, policy: RefreshPolicy) {
            self.token = token
            staleAt = token.expiresAt.addingTimeInterval(-policy.refreshWindow(forLifetime: token.lifetime))
            expiringAt = token.expiresAt.addingTimeInterval(-policy.minimumRemaining(forLifetime: token.lifetime))
        }

        /// The token's state at `now`; the same answer as ``RefreshPolicy/freshness(of:at:)``.
        package func freshness(at now: Date) -> RefreshPolicy.Freshness {
            now < staleAt ? .fresh : now < expiringAt ? .stale : .expiring
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

    /// The entry for `scope`, marked as used so eviction passes it over once.
    package mutating func use(_ scope: AuthorizationScope) -> Entry? {
        guard let position = positions[scope] else { return nil }
        if !slots[position]!.referenced { slots[position]!.referenced = true }
        return slots[position]!.entry
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

    /// The position of the entry to evict from a full ring: the first one the hand finds
    /// with its reference bit clear. Bits it passes are cleared, so two turns at most.
    private mutating func nextVictim() -> Int {
        while true {
            defer { hand = (hand + 1) % slots.count }
            if slots[hand]!.referenced {
                slots[hand]!.referenced = false
            } else {
                return hand
            }
        }
    }
}
