public import Foundation

/// When a cached token is fresh, stale or expiring, and which lifetimes are acceptable.
///
/// A token is *fresh* while more than the refresh window of life is left, and returned at
/// once. Inside the window it is *stale*: still returned at once, and one background refresh
/// starts. Below the minimum remaining lifetime it is *expiring*: callers wait for a new
/// one. Both margins shrink for short-lived tokens (at most a quarter and a half of the
/// lifetime). With `adaptsToTraffic` the window narrows to what the engine sees (the gap
/// between lookups, the slowest recent fetch, room for retries), and the refresh starts
/// early enough to ride out a token-backend outage of `outageTolerance` starting at any
/// moment; meanwhile the cached token is served *degraded* down to `outageFloor`.
/// <doc:WhatTheProviderDoes> and <doc:BadDays> give the figures.
public struct RefreshPolicy: Sendable, Hashable {
    /// The least life a returned token has left: a token with exactly this much left is
    /// still handed out (the platform contract's "at least 5 minutes"), one with a moment less
    /// is not (except degraded during an outage, down to ``outageFloor``). Default 300 s: the
    /// fleet service needs time to accept the request that carries it. Capped at a quarter of
    /// each token's lifetime (900 s for a one-hour token, 30 s for a two-minute one), so that
    /// a short-lived token is still handed out; a value above a quarter of
    /// ``maximumLifetime`` (900 s by default) can never hold, and a provider refuses it.
    public var minimumRemainingLifetime: TimeInterval
    /// How long before expiry a background refresh starts. Default 600 s. Capped at half of
    /// each token's lifetime (1800 s for a one-hour token). The outage reserve widens it: the refresh starts no later than ``outageFloor`` plus
    /// ``outageTolerance`` before expiry, so `refreshWindow: 180` alone, with the other
    /// defaults, starts refreshing 360 s before expiry (set `outageTolerance` lower for less).
    public var refreshWindow: TimeInterval
    /// The longest lifetime (`exp − iat`) accepted. Default 3600 s: the fleet service
    /// rejects longer ones.
    public var maximumLifetime: TimeInterval
    /// The shortest lifetime accepted at all. Default 30 s.
    public var minimumLifetime: TimeInterval
    /// How far apart the body's expiry, the JWT's `exp` and `iat` may be before they count as
    /// disagreeing. Default 60 s.
    public var expiryTolerance: TimeInterval
    /// Whether the refresh window narrows to what the engine observes; `false` refreshes at
    /// the full ``refreshWindow``. Default `true`.
    public var adaptsToTraffic: Bool
    /// How many times the slowest recent fetch an adaptive window leaves. Default 3.
    public var latencyMultiplier: Double
    /// The most random extra an adaptive window adds per token. Default 2 s.
    public var refreshJitter: TimeInterval
    /// How long a token-backend outage, starting at any moment, is ridden out without a
    /// failed lookup. Default 300 s. Each extra minute costs tokens: see the table in
    /// the FleetAuthCore documentation ("Bad days"). Capped at a quarter of each token's
    /// lifetime (900 s for a one-hour token).
    public var outageTolerance: TimeInterval
    /// The least life a token served degraded (during an outage, below
    /// `minimumRemainingLifetime`) has left. Default 60 s. At most
    /// ``minimumRemainingLifetime`` (a provider refuses more), and capped like it at a quarter
    /// of each token's lifetime.
    public var outageFloor: TimeInterval
    /// Whether a cached token is served below ``minimumRemainingLifetime`` (down to
    /// ``outageFloor``) while the backend fails for a transient reason. Default `true`.
    public var servesDuringOutages: Bool
    /// Whether a token fetched off the refresh schedule has its first refresh moved to a
    /// random point before its normal moment, so a fleet that starts together refreshes
    /// spread out. Default `true`.
    public var spreadsRefreshes: Bool

    /// Creates a policy; each argument sets the property of the same name. The defaults
    /// follow the token-provider contract and ride out a 5-minute token-backend outage.
    /// Nothing is checked here: a provider checks the policy when it is made.
    /// - Parameters:
    ///   - minimumRemainingLifetime: See ``minimumRemainingLifetime``.
    ///   - refreshWindow: See ``refreshWindow``.
    ///   - maximumLifetime: The longest lifetime (`exp − iat`) accepted. Default 3600 s: the
    ///     fleet service rejects longer ones.
    ///   - minimumLifetime: The shortest lifetime accepted at all. Default 30 s.
    ///   - expiryTolerance: How far apart the body's expiry, the JWT's `exp` and `iat` may be
    ///     before they count as disagreeing. Default 60 s.
    ///   - adaptsToTraffic: Whether the refresh window narrows to what the engine observes;
    ///     `false` refreshes at the full `refreshWindow`.
    ///   - latencyMultiplier: How many times the slowest recent fetch an adaptive window leaves.
    ///   - refreshJitter: The most random extra an adaptive window adds per token.
    ///   - outageTolerance: See ``outageTolerance``.
    ///   - outageFloor: See ``outageFloor``.
    ///   - servesDuringOutages: Whether a cached token is served below `minimumRemainingLifetime`
    ///     while the backend fails for a transient reason (default `true`); `false` keeps the
    ///     margin to the letter.
    ///   - spreadsRefreshes: Whether a token fetched off the refresh schedule (a cold start, a
    ///     token that ran out, the end of an outage) has its first refresh moved to a random point
    ///     between now and its normal refresh moment (default `true`), so that a fleet that starts
    ///     together refreshes spread out; later refreshes keep that phase. A refresh only moves
    ///     earlier, so `outageTolerance` holds. With it the busiest minute of 10,000 vehicles
    ///     started together is 1.15 times the mean, without it 55 times.
    public init(
        minimumRemainingLifetime: TimeInterval = 300, refreshWindow: TimeInterval = 600,
        maximumLifetime: TimeInterval = 3600, minimumLifetime: TimeInterval = 30, expiryTolerance: TimeInterval = 60,
        adaptsToTraffic: Bool = true, latencyMultiplier: Double = 3, refreshJitter: TimeInterval = 2,
        outageTolerance: TimeInterval = 300, outageFloor: TimeInterval = 60, servesDuringOutages: Bool = true,
        spreadsRefreshes: Bool = true
    ) {
        self.minimumRemainingLifetime = minimumRemainingLifetime
        self.refreshWindow = refreshWindow
        self.maximumLifetime = maximumLifetime
        self.minimumLifetime = minimumLifetime
        self.expiryTolerance = expiryTolerance
        self.adaptsToTraffic = adaptsToTraffic
        self.latencyMultiplier = latencyMultiplier
        self.refreshJitter = refreshJitter
        self.outageTolerance = outageTolerance
        self.outageFloor = outageFloor
        self.servesDuringOutages = servesDuringOutages
        self.spreadsRefreshes = spreadsRefreshes
    }

    /// What an adaptive window leaves beyond the minimum remaining lifetime and the gap
    /// between lookups: `latencyMultiplier` × `slowestFetch`, one retry's backoff, and
    /// `randomUnit` (in `0...1`) of `refreshJitter`. Infinite when the window does not
    /// adapt, so the full `refreshWindow` applies.
    package func adaptiveAllowance(slowestFetch: TimeInterval, retry: RetryPolicy, randomUnit: Double)
        -> TimeInterval
    {
        guard adaptsToTraffic else { return .infinity }
        let retryRoom: TimeInterval
        if retry.maximumAttempts <= 1 {
            retryRoom = 0
        } else if outageTolerance > 0 {
            // Two of the longest waits between retries: the backend may come back just
            // after one attempt failed, and the next one must still land above the floor.
            retryRoom = 2 * (retry.maximumBackoff * (1 + retry.jitter) + slowestFetch)
        } else {
            retryRoom = retry.initialBackoff * (1 + retry.jitter) + slowestFetch
        }
        return latencyMultiplier * slowestFetch + retryRoom + refreshJitter * min(max(randomUnit, 0), 1)
    }

    /// The state of a token at a moment.
    package enum Freshness: Sendable, Hashable {
        /// Plenty of life left.
        case fresh
        /// Usable, but a refresh should start.
        case stale
        /// Too little life left to hand out.
        case expiring
    }

    /// The minimum remaining life for a token of `lifetime` seconds.
    package func minimumRemaining(forLifetime lifetime: TimeInterval) -> TimeInterval {
        min(minimumRemainingLifetime, lifetime / 4)
    }

    /// Whether a token of `lifetime` seconds that arrives with `remaining` seconds left is
    /// long-lived enough to hand out: the rule the SDK and `fleetauth check-endpoint` share.
    package func acceptsShortLife(lifetime: TimeInterval, remaining: TimeInterval) -> Bool {
        lifetime >= minimumLifetime && remaining >= minimumRemaining(forLifetime: lifetime)
    }

    /// The refresh window for a token of `lifetime` seconds: never narrower than the life
    /// an outage of `outageTolerance` needs.
    package func refreshWindow(forLifetime lifetime: TimeInterval) -> TimeInterval {
        max(outageReserve(forLifetime: lifetime), min(refreshWindow, lifetime / 2))
    }

    /// The least life a token of `lifetime` seconds may be served with: `outageFloor`
    /// during an outage (when served degraded), else the minimum remaining lifetime.
    package func lastUsableLife(forLifetime lifetime: TimeInterval) -> TimeInterval {
        let minimum = minimumRemaining(forLifetime: lifetime)
        return servesDuringOutages ? min(outageFloor, minimum) : minimum
    }

    /// The life a token must have left when its refresh starts so that an outage of
    /// `outageTolerance` (at most a quarter of the lifetime) ends before it passes
    /// ``lastUsableLife(forLifetime:)``; never less than the minimum remaining lifetime.
    package func outageReserve(forLifetime lifetime: TimeInterval) -> TimeInterval {
        max(
            minimumRemaining(forLifetime: lifetime),
            lastUsableLife(forLifetime: lifetime) + min(outageTolerance, lifetime / 4))
    }

    /// Throws `invalidConfiguration` when the numbers cannot work together, naming the
    /// setting and the bound it breaks: a setting no accepted token can satisfy is refused,
    /// not capped in silence.
    package func validate() throws(FleetAuthError) {
        func refuse(_ message: String) -> FleetAuthError { .invalidSetting(of: "RefreshPolicy", message) }
        func seconds(_ value: TimeInterval) -> String {
            value.rounded() == value && abs(value) < 1e15 ? "\(Int(value)) s" : "\(value) s"
        }
        let values: KeyValuePairs<String, TimeInterval> = [
            "minimumRemainingLifetime": minimumRemainingLifetime, "refreshWindow": refreshWindow,
            "maximumLifetime": maximumLifetime, "minimumLifetime": minimumLifetime,
            "expiryTolerance": expiryTolerance, "latencyMultiplier": latencyMultiplier,
            "refreshJitter": refreshJitter, "outageTolerance": outageTolerance, "outageFloor": outageFloor,
        ]
        try FleetAuthError.requireFiniteAndNotNegative(values, of: "RefreshPolicy")
        guard maximumLifetime >= minimumLifetime else {
            throw refuse(
                "`maximumLifetime` (\(seconds(maximumLifetime))) is below `minimumLifetime` (\(seconds(minimumLifetime))): no token would be accepted; set maximumLifetime ≥ minimumLifetime."
            )
        }
        let longestMargin = minimumRemaining(forLifetime: maximumLifetime)
        guard minimumRemainingLifetime <= longestMargin else {
            throw refuse(
                "`minimumRemainingLifetime` (\(seconds(minimumRemainingLifetime))) cannot hold: the margin is at most a quarter of a token's lifetime, and `maximumLifetime` (\(seconds(maximumLifetime))) allows at most \(seconds(longestMargin)). Set minimumRemainingLifetime to \(seconds(longestMargin)) or less."
            )
        }
        guard refreshWindow >= minimumRemainingLifetime else {
            throw refuse(
                "`refreshWindow` (\(seconds(refreshWindow))) is below `minimumRemainingLifetime` (\(seconds(minimumRemainingLifetime))): a token would run out of use before its refresh starts; set refreshWindow ≥ minimumRemainingLifetime."
            )
        }
        guard outageFloor <= minimumRemainingLifetime else {
            throw refuse(
                "`outageFloor` (\(seconds(outageFloor))) is above `minimumRemainingLifetime` (\(seconds(minimumRemainingLifetime))): a token served during an outage keeps at least the floor, which is at most the minimum remaining lifetime; set outageFloor ≤ minimumRemainingLifetime."
            )
        }
    }
}
