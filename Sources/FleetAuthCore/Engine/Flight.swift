import Foundation

/// One fetch in flight for a scope, owned by the task that runs it: where it stands
/// (``Stage``), how long its callers may still wait (``Budget``), and who waits.
///
/// The scope's events (a caller comes, an attempt fails, the fetch ends) are
/// ``TokenEngineState``'s (`TokenEngineState+Flights`), which decide; this type holds the
/// rules that read a flight and the steps that change its own fields.
struct Flight {
    /// A caller waiting for the fetch.
    typealias Waiter = CheckedContinuation<AuthToken, any Error>

    /// Whether a task runs the flight.
    enum Stage: Equatable {
        /// Waiting for a slot (``FetchSlots``): no task runs it yet.
        case queued
        /// Its task runs, or is being started. `afterQueue`: it waited for a slot first.
        case running(afterQueue: Bool)
    }

    /// How long the flight's callers may wait: the retry policy's attempts and deadline.
    enum Budget: Equatable {
        /// No caller has waited yet: a background refresh.
        case unclaimed
        /// Callers wait, their deadline counted from `since` (uptime).
        case counting(since: TimeInterval)
        /// Its callers had their attempts and deadline: it retries in the background while a
        /// usable token is held (else it ends after this attempt), and callers without a
        /// usable token are answered with its failure instead of waiting (a forced refresh
        /// claims a new budget).
        case spent
    }

    let id: UInt64
    /// When it started (uptime).
    let startedAt: TimeInterval
    var stage: Stage = .running(afterQueue: false)
    var budget: Budget
    var task: Task<Void, Never>?
    var waiters: [UInt64: Waiter] = [:]
    /// The waiters that asked for a new token (`refresh(for:)`): never served the cached
    /// one when an attempt fails, they get a token this flight fetched or its error.
    var forcedWaiters: Set<UInt64> = []
    /// The attempts of this flight that failed so far.
    var failedAttempts = 0

    /// A background refresh: nobody waits for it yet.
    init(id: UInt64, startedAt: TimeInterval) {
        self.id = id
        self.startedAt = startedAt
        self.budget = .unclaimed
    }

    /// A fetch its first caller starts.
    init(id: UInt64, startedAt: TimeInterval, waiter: (id: UInt64, continuation: Waiter), forced: Bool) {
        self.init(id: id, startedAt: startedAt)
        add(waiter.continuation, id: waiter.id, forced: forced, at: startedAt)
    }

    /// Whether it waits for a slot.
    var isQueued: Bool { stage == .queued }

    /// Whether callers wait within their budget: they bound its attempts, and a transient
    /// failure shows as `refreshing` while they do.
    var hasCallersWithinBudget: Bool {
        guard case .counting = budget else { return false }
        return !waiters.isEmpty
    }

    /// Whether its callers had their budget: it retries in the background, if at all.
    var isBudgetSpent: Bool { budget == .spent }

    /// Where the callers' wait is counted from: their arrival, or the flight's start for a
    /// background refresh (whose budget is spent or never claimed).
    var waitedSince: TimeInterval {
        if case .counting(let since) = budget { return since }
        return startedAt
    }

    /// The moment (uptime) its callers within budget stop waiting, `deadline` after they
    /// came; infinite when none waits within a budget.
    func callersDeadline(_ deadline: TimeInterval) -> TimeInterval {
        hasCallersWithinBudget ? waitedSince + deadline : .infinity
    }

    /// Adds a caller at uptime `now`. The first caller of a flight nobody waited for starts
    /// the budget, and so does a forced caller of a flight whose budget is spent.
    mutating func add(_ waiter: Waiter, id: UInt64, forced: Bool, at now: TimeInterval) {
        let starts =
            switch budget {
            case .unclaimed: true
            case .counting: waiters.isEmpty
            case .spent: forced
            }
        if starts { budget = .counting(since: now) }
        waiters[id] = waiter
        if forced { forcedWaiters.insert(id) }
    }

    /// Removes a caller (cancelled); returns it if it still waited.
    mutating func remove(_ id: UInt64) -> Waiter? {
        forcedWaiters.remove(id)
        return waiters.removeValue(forKey: id)
    }

    /// Its task begins at uptime `started`: a budget counted from before it (callers that
    /// came while the task was being started) counts from now, unless the flight waited for
    /// a slot (then the wait for it counts too).
    mutating func begin(at started: TimeInterval) {
        guard stage == .running(afterQueue: false), case .counting(let since) = budget else { return }
        budget = .counting(since: max(since, started))
    }

    /// Takes the waiters that only looked a token up (not forced), to be served the cached
    /// one degraded.
    mutating func takeLookups() -> [Waiter] {
        let lookups = waiters.filter { !forcedWaiters.contains($0.key) }
        for id in lookups.keys { waiters[id] = nil }
        return Array(lookups.values)
    }

    /// Takes every waiter, to be failed: their budget is spent.
    mutating func takeAllWaiters() -> [Waiter] {
        defer {
            waiters = [:]
            forcedWaiters = []
        }
        return Array(waiters.values)
    }
}
