package import Foundation

/// The token cache's index: an open-addressed hash table whose buckets are the cached
/// scopes' records themselves, one 64-byte record per cache line.
///
/// A lookup that is not inside its token's refresh window reads one record and nothing
/// else: the scope's IDs to compare, the token's value to hand out and the start of the
/// window, side by side. A table of positions pointing into an array of records would
/// make that two dependent cache misses over 100,000 scopes; here it is one, and the
/// only other memory such a lookup touches is the value's own storage, whose reference
/// count it takes.
///
/// Linear probing over the low bits of the scopes' precomputed hashes
/// (``AuthorizationScope/hashCode``), so a lookup hashes nothing; the table grows to keep
/// at most four buckets in five full, and removal shifts later records back, so no
/// tombstones build up. Records move when the table grows or shifts them: each move is
/// reported, so that ``TokenCache`` can keep its slots' bucket indexes current.
///
/// A class that owns its buckets (allocated on a cache-line boundary) and is never
/// copied: ``TokenCache`` holds one and is itself never copied.
package final class ScopeTable: @unchecked Sendable {
    // Safe because a table lives in one cache, which only its shard's lock lets anyone
    // touch: every read and write of the buckets happens with that lock held.
    /// One cached scope: its IDs, kind and hash bits, its position in the cache's ring,
    /// its CLOCK reference bit, its token's value and the start of its refresh window.
    package struct Record {
        /// The low 32 bits of the scope's hash.
        package var hash: UInt32
        /// The position plus one in bits 0–28 (0: an empty bucket), the scope's kind in
        /// bits 29–30, the reference bit in bit 31.
        package var word: UInt32
        package var id: String
        package var taskID: String?
        /// The token's value, so that a lookup handing out only the value touches neither
        /// the cache's slot nor the token.
        package var value: String
        /// Where the token's full refresh window starts (uptime).
        package var watchFrom: TimeInterval

        package static let empty = Record(hash: 0, word: 0, id: "", taskID: nil, value: "", watchFrom: -.infinity)

        package static let referencedBit: UInt32 = 1 << 31
        package static let kindShift: UInt32 = 29
        package static let kindBits: UInt32 = 0b11 << kindShift
        package static let positionBits: UInt32 = (1 << kindShift) - 1

        package var isEmpty: Bool { word == 0 }
        /// The position in the cache's ring.
        package var position: Int { Int(word & Self.positionBits) - 1 }
        package var isReferenced: Bool { word & Self.referencedBit != 0 }
        package var kind: AuthorizationScope.Kind {
            AuthorizationScope.Kind(ordinal: (word & Self.kindBits) >> Self.kindShift)
        }

        /// The scope this record is for: rebuilt, hash and all, from its IDs (which were
        /// normalized when the scope was first made, so the result is equal to it).
        package var scope: AuthorizationScope { AuthorizationScope(kind: kind, id: id, taskID: taskID) }

        /// Whether this record is for `scope`, whose hash bits are known to be `hash`.
        @inline(__always)
        package func holds(_ scope: AuthorizationScope, hash: UInt32) -> Bool {
            self.hash == hash && word & Self.kindBits == scope.kind.ordinal << Self.kindShift && id == scope.id
                && taskID == scope.taskID
        }
    }

    /// The most positions a record can name.
    package static let maximumPositions = Int(Record.positionBits) - 1

    /// The buckets; a power of two of them.
    private var buckets: UnsafeMutablePointer<Record>
    private var mask: Int
    /// How many records the table holds.
    package private(set) var count = 0
    /// Where the buckets are, for ``prefetchRecord(of:location:)``: their address (a multiple of
    /// 64) with the base-2 logarithm of their count in the low six bits. Written under the
    /// shard's lock whenever the buckets move; read by lookups before they take it.
    let location = AtomicWord()

    package init() {
        (buckets, mask) = Self.allocate(count: 8)
        publishLocation()
    }

    private func publishLocation() {
        location.storeReleasing(Int(bitPattern: UInt(bitPattern: buckets)) | (mask + 1).trailingZeroBitCount)
    }

    /// Starts loading the record `scope` would be in first, given the address of the
    /// table's ``location`` word (read through the address, so that the lookup takes no
    /// reference on the word's object), before the lookup takes the shard's lock: the
    /// record's cache miss then overlaps the work before the lock. A table that moved since
    /// the word was read makes a useless hint, never a wrong answer.
    @inline(__always)
    static func prefetchRecord(of scope: AuthorizationScope, location: UnsafeMutablePointer<Int>) {
        let word = UInt(bitPattern: fleetauthLoadRelaxed(location))
        let mask = (UInt(1) << (word & 63)) &- 1
        let offset = (UInt(bits(of: scope)) & mask) &* 64  // a record is 64 bytes (ScopeTableTests)
        guard let base = UnsafeRawPointer(bitPattern: (word & ~63) &+ offset) else { return }
        fleetauthPrefetch(base)
    }

    deinit {
        buckets.deinitialize(count: mask + 1)
        buckets.deallocate()
    }

    private static func allocate(count: Int) -> (UnsafeMutablePointer<Record>, Int) {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Record>.stride, alignment: 64)
        let buckets = raw.bindMemory(to: Record.self, capacity: count)
        buckets.initialize(repeating: .empty, count: count)
        return (buckets, count - 1)
    }

    @inline(__always)
    private static func bits(of scope: AuthorizationScope) -> UInt32 {
        UInt32(truncatingIfNeeded: scope.hashCode)
    }

    /// The record at bucket `index` (from ``bucket(of:)`` or a move report), to read or
    /// change in place.
    @inline(__always)
    package func record(at index: Int) -> UnsafeMutablePointer<Record> {
        buckets + index
    }

    /// The bucket holding `scope`'s record, if it has one.
    @inline(__always)
    package func bucket(of scope: AuthorizationScope) -> Int? {
        let hash = Self.bits(of: scope)
        var index = Int(hash) & mask
        while true {
            let record = buckets + index
            if record.pointee.isEmpty { return nil }
            if record.pointee.holds(scope, hash: hash) { return index }
            index = (index + 1) & mask
        }
    }

    /// Adds a record for `scope`, which has none, at ring position `position` (at most
    /// ``maximumPositions``), and returns its bucket. Growing the table moves every
    /// other record: `moved` hears each one's position and new bucket.
    package func insert(
        _ scope: AuthorizationScope, position: Int, value: String, watchFrom: TimeInterval,
        moved: (_ position: Int, _ bucket: Int) -> Void
    ) -> Int {
        if (count + 1) * 5 > (mask + 1) * 4 { grow(moved: moved) }
        let hash = Self.bits(of: scope)
        var index = Int(hash) & mask
        while !buckets[index].isEmpty { index = (index + 1) & mask }
        buckets[index] = Record(
            hash: hash, word: UInt32(position + 1) | scope.kind.ordinal << Record.kindShift, id: scope.id,
            taskID: scope.taskID, value: value, watchFrom: watchFrom)
        count += 1
        return index
    }

    /// Removes the record at bucket `index`, shifting back the later records of its run
    /// that may move into the hole: `moved` hears each one's position and new bucket.
    package func remove(at index: Int, moved: (_ position: Int, _ bucket: Int) -> Void) {
        var hole = index
        var next = (hole + 1) & mask
        while !buckets[next].isEmpty {
            let home = Int(buckets[next].hash) & mask
            let movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
            if movable {
                buckets[hole] = buckets[next]
                moved(buckets[hole].position, hole)
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = .empty
        count -= 1
    }

    /// Removes every record and gives the memory back.
    package func removeAll() {
        buckets.deinitialize(count: mask + 1)
        buckets.deallocate()
        (buckets, mask) = Self.allocate(count: 8)
        publishLocation()
        count = 0
    }

    /// The scopes that have a record.
    package var scopes: [AuthorizationScope] {
        (0...mask).compactMap { buckets[$0].isEmpty ? nil : buckets[$0].scope }
    }

    private func grow(moved: (_ position: Int, _ bucket: Int) -> Void) {
        let old = buckets
        let oldCount = mask + 1
        (buckets, mask) = Self.allocate(count: oldCount * 2)
        publishLocation()
        for oldIndex in 0..<oldCount where !old[oldIndex].isEmpty {
            var index = Int(old[oldIndex].hash) & mask
            while !buckets[index].isEmpty { index = (index + 1) & mask }
            (buckets + index).update(from: old + oldIndex, count: 1)
            moved(buckets[index].position, index)
        }
        old.deinitialize(count: oldCount)
        old.deallocate()
    }
}
