/// How many fetches of one engine may be making their first attempt at once, and the flights
/// waiting for their turn.
///
/// A fleet started together asks for every vehicle's token at once. Without a bound, each of
/// those fetches holds a task and its request's frames from the first moment (about 10 KB a
/// vehicle), and the backend gets the whole herd in one instant. With it, a flight beyond the
/// limit is a queued record, started in the order it came as an earlier fetch makes room. A
/// fetch makes room when it ends or when its first attempt fails: a fetch retrying through an
/// outage keeps its task but no slot, so that queued flights never wait behind retries. The
/// limit is what the transport sends at once when it says (``TokenRequestBoundedTransport``).
package struct FetchSlots: Sendable {
    /// A flight waiting for a slot.
    package struct Queued: Sendable {
        package let flightID: UInt64
        package let scope: AuthorizationScope
    }

    /// How many flights may hold a slot at once.
    package let limit: Int
    /// The flights holding a slot.
    private var holders: Set<UInt64> = []
    /// The flights waiting for one, oldest first from `head`.
    private var waiting: [Queued] = []
    private var head = 0

    /// Creates slots for `limit` flights at once (at least one).
    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The flights waiting for a slot, oldest first (some may since have ended).
    package var queued: ArraySlice<Queued> { waiting[head...] }

    /// Gives flight `flightID` a slot if one is free (`true`), else queues it (`false`).
    package mutating func admit(_ flightID: UInt64, for scope: AuthorizationScope) -> Bool {
        if holders.count < limit {
            holders.insert(flightID)
            return true
        }
        waiting.append(Queued(flightID: flightID, scope: scope))
        return false
    }

    /// Frees flight `flightID`'s slot; `false` if it held none (it made room already).
    package mutating func release(_ flightID: UInt64) -> Bool {
        holders.remove(flightID) != nil
    }

    /// Takes the oldest queued flight off the queue; the caller gives it the freed slot with
    /// ``occupy(_:)`` if it still waits.
    package mutating func nextQueued() -> Queued? {
        guard head < waiting.count else { return nil }
        let next = waiting[head]
        head += 1
        compact()
        return next
    }

    /// Gives flight `flightID`, taken off the queue, the slot just freed.
    package mutating func occupy(_ flightID: UInt64) {
        holders.insert(flightID)
    }

    /// Forgets every queued flight (sign-out drops them all); slots held stay held until
    /// their fetches end.
    package mutating func dropQueue() {
        waiting = []
        head = 0
    }

    /// Drops the queue's front once it is most of the array: each flight is copied at most
    /// once more.
    private mutating func compact() {
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: waiting.count < 1024)
            head = 0
        } else if head >= 1024, head * 2 >= waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
    }
}
