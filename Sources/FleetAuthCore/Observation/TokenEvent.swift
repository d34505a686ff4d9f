package import Foundation

/// Something the token engine did, for an app to log or count: a fetch that started,
/// succeeded or failed, a token served from the cache (fresh, stale or degraded during an
/// outage), an invalidation, an eviction.
///
/// Count by ``kind``, filter by ``level``, log the ``description``, and count failures by
/// ``error``'s code.
/// Events name the scope and a token's ``AuthToken/fingerprint``, never its value.
/// Observers are called synchronously on the thread that caused the event, outside any
/// lock: keep them short and non-blocking.
public struct TokenEvent: Sendable, CustomStringConvertible {
    /// What happened, in full: what the engine's tests and the endpoint checker read.
    package let detail: Detail

    /// How much the event matters, for filtering what gets logged.
    public var level: TokenEventLevel { detail.level }

    /// The vehicle or trip the event is about; `nil` for `invalidateAll()`.
    public var scope: AuthorizationScope? {
        switch detail {
        case .fetchStarted(let scope, _), .fetchSucceeded(let scope, _, _, _), .fetchFailed(let scope, _, _, _),
            .servedFresh(let scope, _), .failureReplayed(let scope, _), .servedStale(let scope, _),
            .servedDegraded(let scope, _, _, _), .clockDisagreement(let scope, _, _), .refreshScheduled(let scope),
            .invalidated(let scope, _, _), .evicted(let scope):
            scope
        case .invalidatedAll: nil
        }
    }

    /// The failure behind the event: a failed or replayed fetch, or the reason a token was
    /// served degraded; `nil` for the others.
    public var error: FleetAuthError? {
        switch detail {
        case .fetchFailed(_, let error, _, _), .failureReplayed(_, let error), .servedDegraded(_, _, _, let error):
            error
        default: nil
        }
    }

    /// One line, without token values, starting with what happened:
    /// `fetchSucceeded vehicle v-42 tok_1a2b3c4d in 0.200 s, expires in 3599 s`.
    public var description: String { detail.description }

    package init(_ detail: Detail) { self.detail = detail }

    /// Every event the engine emits.
    package enum Detail: Sendable, CustomStringConvertible {
        /// A fetch attempt started (`attempt` counts from 1).
        case fetchStarted(AuthorizationScope, attempt: Int)
        /// A fetch delivered a token after `duration` seconds.
        case fetchSucceeded(AuthorizationScope, fingerprint: String, duration: TimeInterval, expiresIn: TimeInterval)
        /// A fetch attempt failed after `duration` seconds; `retryIn` is set when another
        /// attempt follows.
        case fetchFailed(AuthorizationScope, error: FleetAuthError, duration: TimeInterval, retryIn: TimeInterval?)
        /// A fresh cached token was returned.
        case servedFresh(AuthorizationScope, fingerprint: String)
        /// A caller got the error of a fetch that failed moments ago, replayed during the
        /// scope's cooldown without a request.
        case failureReplayed(AuthorizationScope, error: FleetAuthError)
        /// A stale cached token was returned while a refresh runs.
        case servedStale(AuthorizationScope, fingerprint: String)
        /// A cached token was returned *degraded*, with `remaining` seconds of life: below the
        /// contract's minimum remaining lifetime, above the outage floor, because the backend
        /// fails for a transient reason (`reason`, the last attempt's error).
        case servedDegraded(AuthorizationScope, fingerprint: String, remaining: TimeInterval, reason: FleetAuthError)
        /// A token arrived from a backend whose clock disagreed with the device's by `offset`
        /// seconds (positive: the backend ahead), beyond the refresh policy's expiry tolerance.
        /// The token is kept, its life read off the backend's clock; if the fleet service
        /// refuses it, the backend's clock is the likely cause.
        case clockDisagreement(AuthorizationScope, fingerprint: String, offset: TimeInterval)
        /// A background refresh started for a stale token.
        case refreshScheduled(AuthorizationScope)
        /// `invalidate` ran; `dropped` says whether the token was still the cached one.
        case invalidated(AuthorizationScope, fingerprint: String, dropped: Bool)
        /// `invalidateAll()` ran: every token and fetch was dropped.
        case invalidatedAll
        /// The cache was full and dropped the least recently used scope.
        case evicted(AuthorizationScope)

        /// One line, without token values.
        package var description: String {
            func seconds(_ value: TimeInterval) -> String { String(format: "%.3f s", value) }
            switch self {
            case .fetchStarted(let scope, let attempt): return "fetchStarted \(scope) attempt \(attempt)"
            case .fetchSucceeded(let scope, let fingerprint, let duration, let expiresIn):
                return "fetchSucceeded \(scope) \(fingerprint) in \(seconds(duration)), expires in \(Int(expiresIn)) s"
            case .fetchFailed(let scope, let error, let duration, let retryIn):
                let retry = retryIn.map { ", retry in \(seconds($0))" } ?? ""
                return "fetchFailed \(scope) \(error.reason) in \(seconds(duration))\(retry)"
            case .failureReplayed(let scope, let error):
                return "failureReplayed \(scope) \(error.reason) (cooling down)"
            case .servedFresh(let scope, let fingerprint): return "servedFresh \(scope) \(fingerprint)"
            case .servedStale(let scope, let fingerprint): return "servedStale \(scope) \(fingerprint)"
            case .servedDegraded(let scope, let fingerprint, let remaining, let reason):
                let status = reason.status.map { " HTTP \($0)" } ?? ""
                let left = "with \(Int(remaining)) s left"
                return "servedDegraded \(scope) \(fingerprint) \(left): the backend fails (\(reason.reason)\(status))"
            case .clockDisagreement(let scope, let fingerprint, let offset):
                let side = offset > 0 ? "ahead of" : "behind"
                return
                    "clockDisagreement \(scope) \(fingerprint): the backend's clock is \(SpokenDuration.describe(offset)) \(side) this device's"
            case .refreshScheduled(let scope): return "refreshScheduled \(scope)"
            case .invalidated(let scope, let fingerprint, let dropped):
                return "invalidated \(scope) \(fingerprint) \(dropped ? "dropped" : "not cached")"
            case .invalidatedAll: return "invalidatedAll"
            case .evicted(let scope): return "evicted \(scope)"
            }
        }
    }
}
