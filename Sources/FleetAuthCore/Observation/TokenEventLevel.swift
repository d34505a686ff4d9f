/// How much a ``TokenEvent`` matters, for filtering what gets logged.
///
/// Events that happen on every lookup (a token served from the cache, a failure replayed
/// during a cooldown) are ``debug``; fetches that delivered a token and invalidations are
/// ``info``; a failed attempt that will be retried and a token served degraded during an
/// outage are ``warning``s; a fetch that gave up is an ``error``.
public enum TokenEventLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Per-lookup detail: served fresh or stale, failures replayed, fetches and refreshes starting.
    case debug
    /// What changed: a token fetched, invalidated or evicted.
    case info
    /// A fetch attempt failed and another follows, or a token was served degraded.
    case warning
    /// A fetch failed for good; its callers got the error.
    case error

    /// Orders levels from ``debug`` up to ``error``.
    public static func < (lhs: TokenEventLevel, rhs: TokenEventLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name: `debug`, `info`, `warning` or `error`.
    public var description: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warning: return "warning"
        case .error: return "error"
        }
    }
}

extension TokenEvent {
    /// The level a logger files this event at (see ``TokenEventLevel``).
    public var level: TokenEventLevel {
        switch self {
        case .servedFresh, .servedStale, .failureReplayed, .fetchStarted, .refreshScheduled: return .debug
        case .fetchSucceeded, .invalidated, .invalidatedAll, .evicted: return .info
        case .fetchFailed(_, _, _, let retryIn): return retryIn == nil ? .error : .warning
        case .servedDegraded, .clockDisagreement: return .warning
        }
    }
}
