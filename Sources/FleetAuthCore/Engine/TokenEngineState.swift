import Foundation

/// What one shard of ``TokenEngine`` keeps behind its lock, for the scopes that hash to
/// it: the token cache, the fetch in flight per scope with the callers waiting for it, the
/// cooldown after a failure, the values the fleet service rejected, and the counters
/// behind ``TokenEngine/Statistics``.
struct TokenEngineState {
    typealias Waiter = CheckedContinuation<AuthToken, any Error>

    /// One fetch in flight for a scope, owned by the task that runs it.
    struct Flight {
        let id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: Waiter] = [:]
    }

    /// A failed fetch's error, replayed to callers until `until`.
    struct Cooldown {
        let error: FleetAuthError
        /// On the monotonic clock.
        let until: TimeInterval
    }

    var cache: TokenCache
    var flights: [AuthorizationScope: Flight] = [:]
    var cooldowns: [AuthorizationScope: Cooldown] = [:]
    /// A value the fleet service rejected, with what it said.
    struct Rejected {
        let value: String
        let rejection: TokenRejection?
    }

    /// Values the fleet service rejected, per scope (the last four); a fetch must not
    /// return them.
    var rejected: [AuthorizationScope: [Rejected]] = [:]
    var counter: UInt64 = 0
    var fetches = 0
    var hits = 0
    var waits = 0

    init(cache: TokenCache) {
        self.cache = cache
    }

    mutating func nextID() -> UInt64 {
        counter &+= 1
        return counter
    }

    /// Claims the scope's flight slot for a fetch with no waiter yet (a background
    /// refresh), unless a fetch already runs or the scope is cooling down after a failure.
    /// - Returns: the new flight's ID.
    mutating func startFlightIfIdle(_ scope: AuthorizationScope, now: TimeInterval) -> UInt64? {
        guard flights[scope] == nil else { return nil }
        if let cooldown = cooldowns[scope], cooldown.until > now { return nil }
        let flightID = nextID()
        flights[scope] = Flight(id: flightID)
        fetches += 1
        return flightID
    }
}
