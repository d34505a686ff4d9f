/// The most recent entries of a record that would otherwise grow with simulated time, and
/// how many there were in all: what the in-memory transport, token backend and fleet
/// service keep of their requests, tokens and calls. A simulator of thousands of vehicles
/// makes millions of calls an hour; keeping each one made memory grow by gigabytes.
package struct RecentHistory<Element> {
    /// The number of entries kept by default: all of a test's, the last steps of a simulator's.
    package static var defaultLimit: Int { 10_000 }

    /// How many of the latest entries are kept; 0 keeps none.
    package var limit: Int {
        didSet { trim(to: limit) }
    }
    /// How many entries were ever appended, kept or not.
    package private(set) var total = 0
    private var storage: [Element] = []

    package init(limit: Int = defaultLimit) {
        self.limit = max(0, limit)
    }

    /// The kept entries, oldest first.
    package var elements: [Element] { Array(storage.suffix(limit)) }

    package mutating func append(_ element: Element) {
        total += 1
        guard limit > 0 else { return }
        storage.append(element)
        // Dropping in batches keeps appends O(1) amortized.
        if storage.count >= 2 * limit { trim(to: limit) }
    }

    private mutating func trim(to count: Int) {
        if storage.count > count { storage.removeFirst(storage.count - max(0, count)) }
    }
}

extension RecentHistory: Sendable where Element: Sendable {}
