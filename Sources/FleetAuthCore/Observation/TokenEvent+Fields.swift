public import Foundation

extension TokenEvent {
    /// An event with exactly what an app reads, for the app's own tests: an eviction banner,
    /// alert rules or a dashboard fed with the events a bad day brings, without a provider.
    ///
    /// <!-- snippet setup:
    /// import FleetAuthDriver
    /// -->
    /// ```swift
    /// let vehicle = DriverAuthorizationContext(vehicleID: "v-42").scope
    /// let evicted = TokenEvent(kind: .evictedUsable, scope: vehicle)  // level: warning, as the SDK's
    /// let retried = TokenEvent(
    ///     kind: .fetchRetried, scope: vehicle,
    ///     error: FleetAuthError(code: .unexpectedStatus, message: "HTTP 503", scope: vehicle, status: 503),
    ///     duration: 0.031, retryDelay: 0.512)
    /// print(retried)  // fetchRetried vehicle v-42 unexpectedStatus HTTP 503 in 0.031 s, retry in 0.512 s
    /// ```
    ///
    /// The event reads back what it was made with, and nothing is checked against the kind:
    /// give the fields the SDK's events of that kind carry (``kind``'s documentation says which).
    /// - Parameters:
    ///   - kind: What happened.
    ///   - scope: The vehicle or trip; `nil` only for `signedOut`.
    ///   - level: How much it matters; by default the level the SDK gives the kind: `debug` for
    ///     `servedFresh`, `servedStale`, `failureReplayed`, `fetchStarted` and
    ///     `refreshScheduled`; `info` for `fetchSucceeded`, `invalidated`, `signedOut` and
    ///     `evicted`; `warning` for `fetchRetried`, `servedDegraded`, `clockDisagreement`,
    ///     `evictedUsable`, `requestNotSent` and `duplicateProvider`; `error` for `fetchFailed`
    ///     and `rejected`.
    ///   - error: The failure behind the event.
    ///   - duration: Seconds the fetch or attempt took.
    ///   - tokenFingerprint: The token's ``AuthToken/fingerprint``, where there is a token.
    ///   - retryDelay: Seconds until the next attempt, where one is scheduled.
    ///   - attempt: The attempt a `fetchStarted` starts, from 1.
    ///   - expiresIn: Seconds of life a `fetchSucceeded` token had when it arrived.
    public init(
        kind: Kind, scope: AuthorizationScope? = nil, level: TokenEventLevel? = nil, error: FleetAuthError? = nil,
        duration: TimeInterval? = nil, tokenFingerprint: String? = nil, retryDelay: TimeInterval? = nil,
        attempt: Int? = nil, expiresIn: TimeInterval? = nil
    ) {
        self.init(
            fields: Fields(
                kind: kind, level: level ?? kind.level, scope: scope, tokenFingerprint: tokenFingerprint,
                attempt: attempt, duration: duration, expiresIn: expiresIn, retryDelay: retryDelay, error: error))
    }

    /// What an event made by an app says: what the public accessors read back.
    package struct Fields: Sendable {
        let kind: Kind
        let level: TokenEventLevel
        let scope: AuthorizationScope?
        let tokenFingerprint: String?
        let attempt: Int?
        let duration: TimeInterval?
        let expiresIn: TimeInterval?
        let retryDelay: TimeInterval?
        let error: FleetAuthError?
        /// What the line says after the fields, for a kind whose meaning needs words: the
        /// SDK's `duplicateProvider` warning (a kind `Detail` has no case for).
        var note: String? = nil

        /// The kind, then each field there is, in the words of the SDK's own lines.
        var description: String {
            func seconds(_ value: TimeInterval) -> String { String(format: "%.3f s", value) }
            var text = kind.description
            if let scope { text += " \(scope)" }
            if let tokenFingerprint { text += " \(tokenFingerprint)" }
            if let attempt { text += " attempt \(attempt)" }
            if let error { text += " \(error.summary)" + (error.status.map { " HTTP \($0)" } ?? "") }
            if let duration { text += " in \(seconds(duration))" }
            if let expiresIn { text += ", expires in \(Int(expiresIn)) s" }
            if let retryDelay { text += ", retry in \(seconds(retryDelay))" }
            if let note { text += ": \(note)" }
            return text
        }
    }
}

extension TokenEvent.Kind {
    /// The level the SDK's events of this kind have (see ``TokenEventLevel``).
    package var level: TokenEventLevel {
        switch self {
        case .servedFresh, .servedStale, .failureReplayed, .fetchStarted, .refreshScheduled: .debug
        case .fetchSucceeded, .invalidated, .signedOut, .evicted: .info
        case .fetchFailed, .rejected: .error
        case .fetchRetried, .servedDegraded, .clockDisagreement, .evictedUsable, .requestNotSent, .duplicateProvider:
            .warning
        default: .warning  // no other kind exists: apps cannot make one
        }
    }
}
