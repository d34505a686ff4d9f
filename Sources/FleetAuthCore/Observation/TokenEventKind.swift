public import Foundation

extension TokenEvent {
    /// What kind of thing happened, for counting events by kind in an app's metrics.
    ///
    /// A struct of static members rather than an enum, so that a later release can add
    /// kinds without breaking an app's `switch`: compare with `==` or use it as a
    /// dictionary key. Count by kind, never by parsing an event's text (``TokenEvent/description``): its
    /// wording may change, a kind's name (its `description`) does not.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, as in `"fetchFailed"`; stable across releases.
        public let description: String

        package init(_ name: String) { description = name }

        /// A lookup returned a fresh cached token.
        public static let servedFresh = Kind("servedFresh")
        /// A lookup returned a stale cached token while a refresh runs.
        public static let servedStale = Kind("servedStale")
        /// A lookup returned a token below the minimum remaining lifetime during an outage.
        public static let servedDegraded = Kind("servedDegraded")
        /// A lookup got the error of a fetch that failed moments ago, without a request.
        public static let failureReplayed = Kind("failureReplayed")
        /// A request to the token backend was sent (``TokenEvent/attempt`` says which). Each
        /// ends in exactly one `fetchSucceeded`, `fetchRetried`, `fetchFailed` or `rejected`,
        /// so whenever no fetch is in flight their sum equals the count of `fetchStarted`.
        public static let fetchStarted = Kind("fetchStarted")
        /// An attempt ended before any request was sent: the endpoint's `headers` closure
        /// threw (error code `credentialsUnavailable`), the fetch was cancelled or signed out
        /// first, or the retry deadline ran out. No `fetchStarted` comes before it;
        /// ``TokenEvent/retryDelay`` says when another attempt follows, if one does.
        public static let requestNotSent = Kind("requestNotSent")
        /// A fetch delivered a token (``TokenEvent/expiresIn`` says for how long).
        public static let fetchSucceeded = Kind("fetchSucceeded")
        /// A request failed and another attempt follows.
        public static let fetchRetried = Kind("fetchRetried")
        /// A request failed and no attempt follows: the fetch failed (unless ``rejected``).
        public static let fetchFailed = Kind("fetchFailed")
        /// The backend answered, but the SDK refused its token and the fetch failed: a
        /// malformed answer, or a token for another vehicle, trip, audience or fleet, one
        /// that had expired, or the very token the fleet service had just refused (the
        /// backend sent it again). A backend to fix, not an outage to ride out.
        public static let rejected = Kind("rejected")
        /// A background refresh started for a stale token.
        public static let refreshScheduled = Kind("refreshScheduled")
        /// A token was invalidated, for example because the fleet service rejected it.
        public static let invalidated = Kind("invalidated")
        /// Every token and fetch was dropped (`invalidateAll()`, a sign-out).
        public static let signedOut = Kind("signedOut")
        /// The backend's clock disagreed with the device's beyond the expiry tolerance. The token
        /// is kept, its life read off the backend's clock; if the fleet service refuses it, the
        /// backend's clock is the likely cause.
        public static let clockDisagreement = Kind("clockDisagreement")
        /// A full cache dropped the context stored longest ago, whose token was no longer
        /// usable: routine, at info level.
        public static let evicted = Kind("evicted")
        /// A full cache dropped the context stored longest ago while its token was still
        /// usable, at warning level every time: more contexts are in use than
        /// `cacheCapacity` holds, each dropped one is fetched again (``TokenStatistics``
        /// counts them), so raise it.
        public static let evictedUsable = Kind("evictedUsable")
        /// Another provider in this process serves the same context from the same token
        /// endpoint (on the same clock), at warning level, once per provider (checked for the
        /// first 64 contexts each provider fetches): each provider
        /// fetches and caches its own token, so the backend mints one per provider for the
        /// same vehicle or trip. Make one provider per app and hand it to everything that
        /// needs tokens (reporters, adapters, monitors).
        public static let duplicateProvider = Kind("duplicateProvider")
    }

    /// What kind of thing happened.
    public var kind: Kind { fields?.kind ?? detail.kind }

    /// The attempt a `fetchStarted` event starts, counting from 1 (attempts of a scope
    /// whose backend keeps failing count on from the fetch before); `nil` for other kinds.
    public var attempt: Int? {
        if let fields { return fields.attempt }
        if case .fetchStarted(_, let attempt) = detail { return attempt }
        return nil
    }

    /// The life a `fetchSucceeded` event's token had left when it arrived, in seconds;
    /// `nil` for other kinds. The token itself is never in an event.
    public var expiresIn: TimeInterval? {
        if let fields { return fields.expiresIn }
        if case .fetchSucceeded(_, _, _, let expiresIn) = detail { return expiresIn }
        return nil
    }
}

extension TokenEvent.Detail {
    /// The kind an app counts this event under: a failed attempt's by what follows it (another
    /// attempt, a refused answer, or the end of the fetch), a sign-out's `signedOut`.
    package var kind: TokenEvent.Kind {
        switch self {
        case .servedFresh: .servedFresh
        case .servedStale: .servedStale
        case .servedDegraded: .servedDegraded
        case .failureReplayed: .failureReplayed
        case .fetchStarted: .fetchStarted
        case .fetchSucceeded: .fetchSucceeded
        case .fetchFailed(_, let error, _, let retryIn):
            if retryIn != nil {
                .fetchRetried
            } else if [.malformedResponse, .tokenMismatch, .tokenExpired].contains(error.code) {
                .rejected
            } else {
                .fetchFailed
            }
        case .refreshScheduled: .refreshScheduled
        case .invalidated: .invalidated
        case .invalidatedAll: .signedOut
        case .clockDisagreement: .clockDisagreement
        case .evicted(_, let usable, _): usable ? .evictedUsable : .evicted
        case .notSent: .requestNotSent
        }
    }
}
