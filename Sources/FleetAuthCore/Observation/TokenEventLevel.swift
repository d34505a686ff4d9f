/// How much a ``TokenEvent`` matters, for filtering what gets logged: what happens at every
/// lookup is ``debug``, so the usual ``info`` logs a line per fetch.
public enum TokenEventLevel: Sendable, Comparable, CaseIterable {
    /// Per-lookup detail: served fresh or stale, failures replayed, fetches and refreshes starting.
    case debug
    /// What changed: a token fetched, invalidated or evicted.
    case info
    /// A fetch attempt failed and another follows, or a token was served degraded.
    case warning
    /// A fetch failed for good; its callers got the error.
    case error
}

extension TokenEvent.Detail {
    /// The level a logger files this event at (see ``TokenEventLevel``).
    package var level: TokenEventLevel {
        switch self {
        case .servedFresh, .servedStale, .failureReplayed, .fetchStarted, .refreshScheduled: return .debug
        case .fetchSucceeded, .invalidated, .invalidatedAll, .evicted(_, nil): return .info
        case .evicted(_, _?): return .warning
        case .fetchFailed(_, _, _, let retryIn): return retryIn == nil ? .error : .warning
        case .servedDegraded, .clockDisagreement: return .warning
        }
    }
}
