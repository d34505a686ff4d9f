import FleetAuthCore

/// One line of an endpoint check: what was looked at, the verdict, what was seen and,
/// when it is not ok, what to fix. Never holds a token value.
package struct Finding: Sendable, Equatable {
    /// How a check came out.
    package enum Verdict: String, Sendable, Comparable {
        /// As the SDK needs it.
        case ok
        /// Works, but is risky or unusual.
        case warning
        /// The SDK or the fleet service will refuse it.
        case failure

        private var rank: Int {
            switch self {
            case .ok: 0
            case .warning: 1
            case .failure: 2
            }
        }

        /// `ok` < `warning` < `failure`.
        package static func < (lhs: Verdict, rhs: Verdict) -> Bool { lhs.rank < rhs.rank }
    }

    /// The check's stable name, such as `lifetime` or `authorization`.
    package let check: String
    /// The verdict.
    package let verdict: Verdict
    /// What was seen.
    package let seen: String
    /// What to change; empty when the verdict is ok.
    package let fix: String

    /// Creates a finding; control characters in what was seen or the fix are escaped, so
    /// that text from a backend cannot forge a line of the report.
    package init(_ check: String, _ verdict: Verdict, _ seen: String, fix: String = "") {
        self.check = check
        self.verdict = verdict
        self.seen = seen.escapingControlCharacters
        self.fix = fix.escapingControlCharacters
    }
}
