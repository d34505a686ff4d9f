import Foundation

/// What ``TokenEngine`` keeps behind its one lock: the token cache, each scope's fetch in
/// flight with its waiting callers, failures since the last success, values the fleet
/// service rejected, running fetch tasks, and the counters behind ``TokenStatistics``.
struct TokenEngineState {
    /// A caller waiting for a condition of `waitUntilIdle()` or `waitUntilCallersAnswered()`.
    typealias ConditionWaiter = CheckedContinuation<Void, Never>

    /// A token state to publish once the lock is released, numbered in the order the
    /// changes happened.
    struct StateChange {
        let sequence: UInt64
        let state: TokenState
    }

    var cache: TokenCache
    var flights: [AuthorizationScope: Flight] = [:]
    /// What each scope's fetches met since they last went well, and when it may ask the
    /// backend again (``FetchGate``): kept only while it holds something.
    var gates: [AuthorizationScope: FetchGate] = [:]
    /// Set by `invalidateAll()` (sign-out) and cleared when the app next asks for a token:
    /// until then every scope without a token or a fetch stands `signedOut`.
    var signedOut = false
    /// The scopes whose streams heard `signedOut` (those held at sign-out, and those a stream
    /// opened since follows): they hear `noToken` when the app signs in again.
    var signedOutScopes: Set<AuthorizationScope> = []
    /// Values the fleet service rejected, per scope (the last four); a fetch must not
    /// return them.
    var rejected: [AuthorizationScope: [String]] = [:]
    var counter: UInt64 = 0
    var fetches = 0
    var hits = 0
    var waits = 0
    var degraded = 0
    /// Tokens the full cache dropped while still usable.
    var evictedUsable = 0
    /// Fetch tasks started and not yet finished, and the callers of `waitUntilIdle()`.
    var runningTasks = 0
    /// The fetches making their first attempt, and the flights waiting for their turn.
    var slots: FetchSlots
    /// Whether a task watches the queued flights' waiters for the end of their budget.
    var queueWatched = false
    var idleWaiters: [ConditionWaiter] = []
    /// The callers of `waitUntilCallersAnswered()`.
    var answeredWaiters: [ConditionWaiter] = []
    /// The last successful fetch durations, oldest first.
    private var durations: [TimeInterval] = []
    /// Whether a token-state stream is open, as read when the lock was taken.
    var watched = false
    /// Changes made under the lock that ``TokenEngine`` publishes after releasing it.
    var changes: [StateChange] = []
    /// When watched scopes' states change by time alone, and the engine's one sleep until
    /// the next of those moments (``TokenEngine/armPhaseClock()``).
    var phaseDeadlines = PhaseDeadlines()
    var phaseClock: (at: TimeInterval, id: UInt64, task: Task<Void, Never>?)?
    private var stateSequence: UInt64 = 0

    /// How many fetch durations are kept; the slowest of them stands for the p99.
    static let durationWindow = 32

    init(capacity: Int, concurrentFetchLimit: Int) {
        cache = TokenCache(capacity: capacity)
        slots = FetchSlots(limit: concurrentFetchLimit)
    }

    /// Drops what is kept for `scope` beside its cache entry (its outage, its rejected
    /// values) unless a fetch for it runs: the cache has let it go.
    mutating func forget(_ scope: AuthorizationScope) {
        guard flights[scope] == nil else { return }
        gates[scope] = nil
        rejected[scope] = nil
    }

    /// Keeps the gates and rejected values bounded by the cache: past twice its capacity,
    /// those of scopes with no cache entry and no fetch running go (a pass paid once per
    /// at least as many new scopes as the cache holds).
    mutating func boundPerScopeState() {
        guard gates.count > 2 * cache.capacity || rejected.count > 2 * cache.capacity else { return }
        for scope in Set(gates.keys).union(rejected.keys) where flights[scope] == nil && cache.peek(scope) == nil {
            gates[scope] = nil
            rejected[scope] = nil
        }
    }

    mutating func nextID() -> UInt64 {
        counter &+= 1
        return counter
    }

    /// Whether no fetch task runs, background refreshes included.
    var isIdle: Bool { runningTasks == 0 }

    /// Whether no caller waits for a fetch (background refreshes may still run).
    var callersAnswered: Bool { flights.values.allSatisfy { $0.waiters.isEmpty } }

    /// Empties `queue` if `condition` holds now: the waiters to wake.
    mutating func take(_ queue: WritableKeyPath<Self, [ConditionWaiter]>, when condition: Bool)
        -> [ConditionWaiter]
    {
        guard condition, !self[keyPath: queue].isEmpty else { return [] }
        defer { self[keyPath: queue].removeAll() }
        return self[keyPath: queue]
    }

    /// Records a successful fetch's duration.
    mutating func recordFetch(duration: TimeInterval) {
        guard duration.isFinite, duration >= 0 else { return }
        if durations.count == Self.durationWindow { durations.removeFirst() }
        durations.append(duration)
    }

    /// The slowest of the recent fetches (0 before the first).
    var slowestRecentFetch: TimeInterval { durations.max() ?? 0 }

    /// Notes that `scope`'s token state may have changed, for the streams to hear once
    /// the lock is released.
    mutating func noteChange(of scope: AuthorizationScope, at now: TimeInterval) {
        guard watched else { return }
        let standing = standing(of: scope, at: now)
        note(standing.state)
        if let moment = standing.until { phaseDeadlines.schedule(scope, at: moment) }
    }

    /// Queues `state` for publishing, numbered after every change before it.
    mutating func note(_ state: TokenState) {
        guard watched else { return }
        stateSequence &+= 1
        changes.append(StateChange(sequence: stateSequence, state: state))
    }

    /// Every scope with a token, a fetch or a failure held here.
    var knownScopes: Set<AuthorizationScope> {
        Set(cache.scopes).union(flights.keys).union(gates.keys)
    }
}
