/// How much a ``TokenEvent`` matters, for filtering what gets logged: what happens at every
/// lookup is ``debug``, so the usual ``info`` logs a line per fetch.
public enum TokenEventLevel: Sendable, Comparable, CaseIterable {
    /// Per-lookup detail: served fresh or stale, failures replayed, fetches and refreshes starting.
    case debug
    /// What changed: a token fetched or invalidated, a context that had no usable token left
    /// dropped from a full cache.
    case info
    /// A fetch attempt failed and another follows, a token was served degraded, a full cache
    /// dropped a token that was still usable, a lookup failed before any request was sent, or
    /// a second provider serves the same context from the same endpoint.
    case warning
    /// A fetch failed for good; its callers got the error.
    case error
}

extension TokenEvent.Detail {
    /// The level a logger files this event at: its kind's (see ``TokenEventLevel``).
    package var level: TokenEventLevel { kind.level }
}
