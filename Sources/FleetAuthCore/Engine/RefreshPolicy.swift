public import Foundation

/// When a cached token is fresh, stale or expiring, and which lifetimes are acceptable.
///
/// A token is *fresh* while more than the refresh window of life is left: it is returned
/// at once. It is *stale* inside the refresh window: it is still returned at once, and
/// one background refresh starts. It is *expiring* inside the minimum remaining
/// lifetime: callers wait for a new token. Both margins shrink for short-lived tokens
/// (at most a quarter and a half of the lifetime) so that a 2-minute token is usable
/// for a minute instead of causing a refetch loop.
public struct RefreshPolicy: Sendable, Hashable {
    /// The least life a returned token has left. Default 300 s: the fleet service
    /// needs time to accept the request that carries it.
    public var minimumRemainingLifetime: TimeInterval
    /// How long before expiry a background refresh starts. Default 600 s.
    public var refreshWindow: TimeInterval
    /// The longest lifetime (`exp − iat`) accepted. Default 3600 s: the fleet service
    /// rejects longer ones.
    public var maximumLifetime: TimeInterval
    /// The shortest lifetime accepted at all. Default 30 s.
    public var minimumLifetime: TimeInterval
    /// How far apart the body's expiry, the JWT's `exp` and `iat` may be before they
    /// count as disagreeing. Default 60 s.
    public var expiryTolerance: TimeInterval

    /// Creates a policy; the defaults follow the token-provider contract.
    public init(
        minimumRemainingLifetime: TimeInterval = 300, refreshWindow: TimeInterval = 600,
        maximumLifetime: TimeInterval = 3600, minimumLifetime: TimeInterval = 30, expiryTolerance: TimeInterval = 60
    ) {
        self.minimumRemainingLifetime = minimumRemainingLifetime
        self.refreshWindow = refreshWindow
        self.maximumLifetime = maximumLifetime
        self.minimumLifetime = minimumLifetime
        self.expiryTolerance = expiryTolerance
    }

    /// The state of a token at a moment.
    public enum Freshness: Sendable, Hashable {
        /// Plenty of life left.
        case fresh
        /// Usable, but a refresh should start.
        case stale
        /// Too little life left to hand out.
        case expiring
    }

    /// The minimum remaining life for a token of `lifetime` seconds.
    public func minimumRemaining(forLifetime lifetime: TimeInterval) -> TimeInterval {
        min(minimumRemainingLifetime, lifetime / 4)
    }

    /// The refresh window for a token of `lifetime` seconds.
    public func refreshWindow(forLifetime lifetime: TimeInterval) -> TimeInterval {
        max(minimumRemaining(forLifetime: lifetime), min(refreshWindow, lifetime / 2))
    }

    /// Classifies `token` at `now` (device clock).
    public func freshness(of token: AuthToken, at now: Date) -> Freshness {
        let remaining = token.remainingLifetime(at: now)
        if remaining > refreshWindow(forLifetime: token.lifetime) { return .fresh }
        if remaining > minimumRemaining(forLifetime: token.lifetime) { return .stale }
        return .expiring
    }

    /// Throws `invalidConfiguration` when the numbers cannot work together.
    public func validate() throws(FleetAuthError) {
        let values = [minimumRemainingLifetime, refreshWindow, maximumLifetime, minimumLifetime, expiryTolerance]
        guard values.allSatisfy({ $0.isFinite && $0 >= 0 }), refreshWindow >= minimumRemainingLifetime,
            maximumLifetime >= minimumLifetime
        else {
            throw FleetAuthError(
                code: .invalidConfiguration,
                message:
                    "The refresh policy needs finite, non-negative values with refreshWindow ≥ minimumRemainingLifetime and maximumLifetime ≥ minimumLifetime."
            )
        }
    }
}
