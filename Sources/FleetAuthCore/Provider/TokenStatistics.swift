/// Counts of what a ``TokenProvider`` has done since it was made: the ratio of ``waits``
/// to ``hits`` is how often a caller had to wait for the network.
public struct TokenStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Fetches started: one per request round to the backend, however many callers
    /// shared it, retries of one fetch included in it.
    public var fetches: Int
    /// Lookups answered from the cache without waiting, fresh or stale.
    public var hits: Int
    /// Callers that had to wait for a fetch (a cold, expired or invalidated scope).
    public var waits: Int
    /// Lookups answered degraded: with a token below the minimum remaining lifetime
    /// (above the outage floor) while the backend failed for a transient reason. Also
    /// counted in ``hits``.
    public var degradedServes: Int
    /// Contexts with a cached token now.
    public package(set) var cachedScopes: Int
    /// Tokens a full cache dropped while they were still usable: more contexts in use than
    /// `cacheCapacity` holds, each dropped one fetched again (each an `evictedUsable` event).
    public package(set) var evictedUsable = 0
    /// Fetches in flight now, background refreshes and those waiting for their turn included.
    public package(set) var activeFetches: Int

    /// Counts as given, for an app's test of a dashboard that reads ``TokenProvider/statistics``.
    public init(
        fetches: Int = 0, hits: Int = 0, waits: Int = 0, degradedServes: Int = 0, cachedScopes: Int = 0,
        evictedUsable: Int = 0, activeFetches: Int = 0
    ) {
        (self.fetches, self.hits, self.waits, self.degradedServes) = (fetches, hits, waits, degradedServes)
        (self.cachedScopes, self.evictedUsable, self.activeFetches) = (cachedScopes, evictedUsable, activeFetches)
    }

    /// `fetches 3, hits 120, waits 2, degraded 0, cached 2, in flight 0`: the counts, the
    /// contexts with a cached token now and the fetches in flight now; then, if a full
    /// cache ever dropped a usable token, `, evicted while usable 5 (raise cacheCapacity)`.
    public var description: String {
        let evicted = evictedUsable == 0 ? "" : ", evicted while usable \(evictedUsable) (raise cacheCapacity)"
        return
            "fetches \(fetches), hits \(hits), waits \(waits), degraded \(degradedServes), cached \(cachedScopes), in flight \(activeFetches)\(evicted)"
    }
}
