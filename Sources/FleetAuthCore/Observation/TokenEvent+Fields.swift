import Foundation

extension TokenEvent {
    /// What an event made of fields says (the SDK's `duplicateProvider` warning, a kind added
    /// after 1.0.0): what the public accessors read back.
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
