public import Foundation

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
    /// What happened, in full: what the engine's tests and the endpoint checker read. An
    /// event made of fields (`duplicateProvider`) has ``fields`` instead, and this placeholder.
    package let detail: Detail

    /// What an event made of fields says (`duplicateProvider`); `nil` for the other events.
    let fields: Fields?

    /// How much the event matters, for filtering what gets logged.
    public var level: TokenEventLevel { fields?.level ?? detail.level }

    /// The vehicle or trip the event is about; `nil` for `invalidateAll()`.
    public var scope: AuthorizationScope? {
        if let fields { return fields.scope }
        return switch detail {
        case .fetchStarted(let scope, _), .fetchSucceeded(let scope, _, _, _), .fetchFailed(let scope, _, _, _),
            .servedFresh(let scope, _), .failureReplayed(let scope, _), .servedStale(let scope, _),
            .servedDegraded(let scope, _, _, _), .clockDisagreement(let scope, _, _), .refreshScheduled(let scope),
            .invalidated(let scope, _, _), .evicted(let scope, _, _), .notSent(let scope, _, _):
            scope
        case .invalidatedAll: nil
        }
    }

    /// The failure behind the event: a failed or replayed fetch, or the reason a token was
    /// served degraded; `nil` for the others.
    public var error: FleetAuthError? {
        if let fields { return fields.error }
        return switch detail {
        case .fetchFailed(_, let error, _, _), .failureReplayed(_, let error), .servedDegraded(_, _, _, let error),
            .notSent(_, let error, _):
            error
        default: nil
        }
    }

    /// How long the fetch (`fetchSucceeded`, from its first attempt) or the attempt
    /// (`fetchRetried`, `fetchFailed`, `rejected`) took, in seconds; `nil` for other kinds.
    public var duration: TimeInterval? {
        if let fields { return fields.duration }
        return switch detail {
        case .fetchSucceeded(_, _, let duration, _), .fetchFailed(_, _, let duration, _): duration
        default: nil
        }
    }

    /// The fingerprint of the token the event is about (served, fetched, invalidated, or
    /// whose clock disagreed); `nil` where there is no token. Never the token itself.
    public var tokenFingerprint: String? {
        if let fields { return fields.tokenFingerprint }
        return switch detail {
        case .fetchSucceeded(_, let fingerprint, _, _), .servedFresh(_, let fingerprint),
            .servedStale(_, let fingerprint), .servedDegraded(_, let fingerprint, _, _),
            .clockDisagreement(_, let fingerprint, _), .invalidated(_, let fingerprint, _):
            fingerprint
        default: nil
        }
    }

    /// Seconds until the next attempt, when one is scheduled (`fetchRetried`, or a
    /// `requestNotSent` that another attempt follows); `nil` otherwise.
    public var retryDelay: TimeInterval? {
        if let fields { return fields.retryDelay }
        return switch detail {
        case .fetchFailed(_, _, _, let retryIn), .notSent(_, _, let retryIn): retryIn
        default: nil
        }
    }

    /// One line, without token values, starting with what happened:
    /// `fetchSucceeded vehicle v-42 tok_1a2b3c4d in 0.200 s, expires in 3599 s`.
    public var description: String { fields?.description ?? detail.description }

    package init(_ detail: Detail) {
        self.detail = detail
        self.fields = nil
    }

    /// An event an app made: its ``Fields``, and a placeholder detail that nothing reads.
    init(fields: Fields) {
        self.detail = .invalidatedAll
        self.fields = fields
    }

    /// Every event the engine emits: the cases of ``Kind``, documented there, with what each
    /// carries. A failed attempt is one case, `fetchFailed`, whose kind is `fetchRetried` when
    /// `retryIn` is set, else `rejected` or `fetchFailed` by its error; `invalidatedAll` is
    /// `signedOut`. `servedDegraded`'s `reason` is the last attempt's error;
    /// `clockDisagreement`'s `offset` is positive when the backend's clock is ahead.
    package enum Detail: Sendable, CustomStringConvertible {
        case fetchStarted(AuthorizationScope, attempt: Int)
        case fetchSucceeded(AuthorizationScope, fingerprint: String, duration: TimeInterval, expiresIn: TimeInterval)
        case fetchFailed(AuthorizationScope, error: FleetAuthError, duration: TimeInterval, retryIn: TimeInterval?)
        case servedFresh(AuthorizationScope, fingerprint: String)
        case failureReplayed(AuthorizationScope, error: FleetAuthError)
        case servedStale(AuthorizationScope, fingerprint: String)
        case servedDegraded(AuthorizationScope, fingerprint: String, remaining: TimeInterval, reason: FleetAuthError)
        case clockDisagreement(AuthorizationScope, fingerprint: String, offset: TimeInterval)
        case refreshScheduled(AuthorizationScope)
        case invalidated(AuthorizationScope, fingerprint: String, dropped: Bool)
        case invalidatedAll
        /// `usable`: the token dropped was still usable; `capacity` is the cache's.
        case evicted(AuthorizationScope, usable: Bool, capacity: Int)
        /// An attempt that sent no request: the `headers` closure threw, the fetch was
        /// cancelled or signed out first, or the retry deadline ran out; `retryIn` as for
        /// `fetchFailed`.
        case notSent(AuthorizationScope, error: FleetAuthError, retryIn: TimeInterval?)

        /// One line, without token values, starting with the event's ``TokenEvent/kind``.
        package var description: String {
            func seconds(_ value: TimeInterval) -> String { String(format: "%.3f s", value) }
            switch self {
            case .fetchStarted(let scope, let attempt): return "fetchStarted \(scope) attempt \(attempt)"
            case .fetchSucceeded(let scope, let fingerprint, let duration, let expiresIn):
                return "fetchSucceeded \(scope) \(fingerprint) in \(seconds(duration)), expires in \(Int(expiresIn)) s"
            case .fetchFailed(let scope, let error, let duration, let retryIn):
                let retry = retryIn.map { ", retry in \(seconds($0))" } ?? ""
                return "\(kind) \(scope) \(error.reason) in \(seconds(duration))\(retry)"
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
            case .invalidatedAll: return "signedOut: every token and fetch dropped"
            case .evicted(let scope, false, _): return "evicted \(scope)"
            case .evicted(let scope, true, let capacity):
                return
                    "evictedUsable \(scope) while its token was still usable: more contexts are in use than cacheCapacity (\(capacity)) holds, and each one dropped is fetched again; raise cacheCapacity above the number of vehicles and trips served"
            case .notSent(let scope, let error, let retryIn):
                let retry = retryIn.map { ", retry in \(seconds($0))" } ?? ""
                return "requestNotSent \(scope) \(error.reason)\(retry)"
            }
        }
    }
}
