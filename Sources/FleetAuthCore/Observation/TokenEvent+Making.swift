public import Foundation

/// Every event the SDK sends, made as the SDK makes it: for an app's own tests of what reads
/// events (an eviction banner, alert rules, a dashboard) without a provider. Each takes exactly
/// the fields the SDK's events of its kind carry, has the SDK's level for its kind, and reads
/// back, describes itself and compares as the SDK's own event does.
///
/// <!-- snippet setup:
/// import FleetAuthDriver
/// -->
/// ```swift
/// let vehicle = DriverAuthorizationContext(vehicleID: "v-42").scope
/// let outage = FleetAuthError(code: .unexpectedStatus, message: "HTTP 503", scope: vehicle, status: 503)
/// let retried = TokenEvent.fetchFailed(vehicle, error: outage, duration: 0.031, retryDelay: 0.512)
/// print(retried)  // fetchRetried vehicle v-42 unexpectedStatus in 0.031 s, retry in 0.512 s
/// let evicted = TokenEvent.evicted(vehicle, whileUsable: true, cacheCapacity: 1000)  // level: warning
/// ```
extension TokenEvent {
    /// `fetchStarted`: attempt `attempt` (from 1) of a fetch for `scope` starts.
    public static func fetchStarted(_ scope: AuthorizationScope, attempt: Int) -> TokenEvent {
        TokenEvent(.fetchStarted(scope, attempt: attempt))
    }

    /// `fetchSucceeded`: a token arrived after `duration` seconds, with `expiresIn` seconds of
    /// life left.
    public static func fetchSucceeded(
        _ scope: AuthorizationScope, tokenFingerprint: String, duration: TimeInterval, expiresIn: TimeInterval
    ) -> TokenEvent {
        TokenEvent(.fetchSucceeded(scope, fingerprint: tokenFingerprint, duration: duration, expiresIn: expiresIn))
    }

    /// An attempt that failed after `duration` seconds with `error`. Its kind is what the SDK
    /// gives it: `fetchRetried` when another attempt follows in `retryDelay` seconds, else
    /// `rejected` when the answer itself was refused (a malformed answer, a token for another
    /// vehicle or trip, an expired one), else `fetchFailed`.
    public static func fetchFailed(
        _ scope: AuthorizationScope, error: FleetAuthError, duration: TimeInterval, retryDelay: TimeInterval? = nil
    ) -> TokenEvent {
        TokenEvent(.fetchFailed(scope, error: error, duration: duration, retryIn: retryDelay))
    }

    /// `requestNotSent`: an attempt that sent nothing (the `headers` closure threw, the retry
    /// deadline ran out, the fetch was cancelled); another follows in `retryDelay` seconds if set.
    public static func requestNotSent(
        _ scope: AuthorizationScope, error: FleetAuthError, retryDelay: TimeInterval? = nil
    ) -> TokenEvent {
        TokenEvent(.notSent(scope, error: error, retryIn: retryDelay))
    }

    /// `servedFresh`: a lookup was served a fresh token.
    public static func servedFresh(_ scope: AuthorizationScope, tokenFingerprint: String) -> TokenEvent {
        TokenEvent(.servedFresh(scope, fingerprint: tokenFingerprint))
    }

    /// `servedStale`: a lookup was served a usable token while its refresh runs.
    public static func servedStale(_ scope: AuthorizationScope, tokenFingerprint: String) -> TokenEvent {
        TokenEvent(.servedStale(scope, fingerprint: tokenFingerprint))
    }

    /// `servedDegraded`: a lookup was served a token with `remaining` seconds left while the
    /// backend fails with `error`.
    public static func servedDegraded(
        _ scope: AuthorizationScope, tokenFingerprint: String, remaining: TimeInterval, error: FleetAuthError
    ) -> TokenEvent {
        TokenEvent(.servedDegraded(scope, fingerprint: tokenFingerprint, remaining: remaining, reason: error))
    }

    /// `failureReplayed`: a lookup during the cooldown after a failure got that failure again.
    public static func failureReplayed(_ scope: AuthorizationScope, error: FleetAuthError) -> TokenEvent {
        TokenEvent(.failureReplayed(scope, error: error))
    }

    /// `clockDisagreement`: the backend's clock is `offset` seconds ahead of the device's
    /// (behind when negative), as the token's issue time says.
    public static func clockDisagreement(
        _ scope: AuthorizationScope, tokenFingerprint: String, offset: TimeInterval
    ) -> TokenEvent {
        TokenEvent(.clockDisagreement(scope, fingerprint: tokenFingerprint, offset: offset))
    }

    /// `refreshScheduled`: a background refresh of the scope's token was scheduled.
    public static func refreshScheduled(_ scope: AuthorizationScope) -> TokenEvent {
        TokenEvent(.refreshScheduled(scope))
    }

    /// `invalidated`: the token was invalidated; `dropped` when it was the one cached.
    public static func invalidated(
        _ scope: AuthorizationScope, tokenFingerprint: String, dropped: Bool = true
    ) -> TokenEvent {
        TokenEvent(.invalidated(scope, fingerprint: tokenFingerprint, dropped: dropped))
    }

    /// `signedOut`: every token and fetch was dropped.
    public static var signedOut: TokenEvent { TokenEvent(.invalidatedAll) }

    /// `evicted`, or `evictedUsable` when the token dropped was still usable: the cache, of
    /// `cacheCapacity` contexts, made room.
    public static func evicted(
        _ scope: AuthorizationScope, whileUsable: Bool = false, cacheCapacity: Int
    ) -> TokenEvent {
        TokenEvent(.evicted(scope, usable: whileUsable, capacity: cacheCapacity))
    }

    /// `duplicateProvider`: another provider in this process serves `scope` from the same
    /// token endpoint; `providers` counts them, this one included.
    public static func duplicateProvider(_ scope: AuthorizationScope, providers: Int) -> TokenEvent {
        TokenEvent(
            fields: Fields(
                kind: .duplicateProvider, level: .warning, scope: scope, tokenFingerprint: nil, attempt: nil,
                duration: nil, expiresIn: nil, retryDelay: nil, error: nil,
                note:
                    "\(providers) providers in this process fetch its token from the same endpoint, each its own token, so the backend mints one per provider; make one provider per app and hand it to everything that needs tokens"
            ))
    }
}

/// Two events are equal when every field an app reads is: kind, level, scope, the token's
/// fingerprint, attempt, duration, expiry, retry delay, the error's code, status and message, and
/// the line they write.
extension TokenEvent: Equatable {
    /// Whether the two events say the same.
    public static func == (lhs: TokenEvent, rhs: TokenEvent) -> Bool {
        lhs.kind == rhs.kind && lhs.level == rhs.level && lhs.scope == rhs.scope
            && lhs.tokenFingerprint == rhs.tokenFingerprint && lhs.attempt == rhs.attempt
            && lhs.duration == rhs.duration && lhs.expiresIn == rhs.expiresIn && lhs.retryDelay == rhs.retryDelay
            && lhs.error?.code == rhs.error?.code && lhs.error?.status == rhs.error?.status
            && lhs.error?.message == rhs.error?.message && lhs.description == rhs.description
    }
}
