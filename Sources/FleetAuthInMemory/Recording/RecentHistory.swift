/// The most recent entries of a record that would otherwise grow with simulated time, and
/// how many there were in all: what the in-memory transport, token backend and fleet
/// service keep of their requests, tokens and calls. A simulator of thousands of vehicles
/// makes millions of calls an hour; keeping each one made memory grow by gigabytes.
package struct RecentHistory<Element> {
    /// The number of entries kept by default: all of a test's, the last steps of a simulator's.
    package static var defaultLimit: Int { 10_000 }

    /// How many of the latest entries are kept; 0 keeps none.
    package var limit: Int {
        didSet { keepLatest(limit) }
    }
    /// How many entries were ever appended, kept or not.
    package private(set) var total = 0
    /// The kept entries: in order until `limit` are kept, then a ring whose oldest entry is
    /// at `oldest`. Each append past the limit replaces the oldest entry, so the doubles free
    /// one recorded request as they record the next: dropping thousands at once made the
    /// allocator merge thousands of freed blocks in one step of a simulator.
    private var storage: [Element] = []
    private var oldest = 0

    package init(limit: Int = defaultLimit) {
        self.limit = max(0, limit)
    }

    /// The kept entries, oldest first.
    package var elements: [Element] { Array(storage[oldest...]) + storage[..<oldest] }

    package mutating func append(_ element: Element) {
        total += 1
        guard limit > 0 else { return }
        if storage.count < limit {
            storage.append(element)
        } else {
            storage[oldest] = element
            oldest = (oldest + 1) % limit
        }
    }

    private mutating func keepLatest(_ count: Int) {
        storage = Array(elements.suffix(max(0, count)))
        oldest = 0
    }
}

extension RecentHistory: Sendable where Element: Sendable {}
