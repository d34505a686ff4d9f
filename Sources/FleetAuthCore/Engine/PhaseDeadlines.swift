import Foundation

/// The moments at which a watched scope's token state changes by time alone (a token that
/// runs out, a degraded token that reaches its outage floor), earliest first: the engine
/// sleeps until the next and notes the scopes due then, so a token-state stream hears a
/// change the clock made as it hears one a request made.
///
/// A binary min-heap of (moment, scope), with each scope's earliest moment on the side: a
/// scope scheduled again for a later moment keeps its earlier one (the state is read anew
/// then, and schedules what comes next), so the heap holds about one entry per watched scope.
struct PhaseDeadlines {
    private var heap: [(at: TimeInterval, scope: AuthorizationScope)] = []
    private var earliest: [AuthorizationScope: TimeInterval] = [:]

    /// The next moment due (uptime), if any.
    var next: TimeInterval? { heap.first?.at }

    /// Schedules `scope` to be read again at uptime `moment`, unless it is already due sooner.
    mutating func schedule(_ scope: AuthorizationScope, at moment: TimeInterval) {
        if let due = earliest[scope], due <= moment { return }
        earliest[scope] = moment
        heap.append((moment, scope))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the scopes due at uptime `now` or before.
    mutating func takeDue(at now: TimeInterval) -> [AuthorizationScope] {
        var due: [AuthorizationScope] = []
        while let first = heap.first, first.at <= now {
            removeFirst()
            // An entry that an earlier moment replaced is stale.
            if earliest[first.scope] == first.at {
                earliest[first.scope] = nil
                due.append(first.scope)
            }
        }
        return due
    }

    private mutating func removeFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].at < heap[smallest].at { smallest = left }
            if right < heap.count, heap[right].at < heap[smallest].at { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
