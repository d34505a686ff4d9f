package import FleetAuthCore
import Foundation

/// The outcome of checking a token endpoint: every finding, the token's fingerprint if
/// one arrived, and renderings for people and machines.
package struct EndpointReport: Sendable {
    /// The URL checked (without its query).
    package let url: String
    /// The vehicle or trip the token was asked for.
    package let scope: AuthorizationScope
    /// The findings, in the order they were made.
    package let findings: [Finding]
    /// The token's fingerprint, if a token arrived.
    package let tokenFingerprint: String?
    /// The `fleetauth` flags that name the response format the body matched (`--format
    /// jwt-expiration-timestamp`), if one did.
    package var formatFlags: String? = nil
    /// The Swift expression of that format (`.jwtWithExpirationTimestamp`), if one matched.
    package var formatSwift: String? = nil
    /// The statement that makes the app's provider as checked (its `TokenEndpoint` with that
    /// format, and its `TokenRules` when not the default), if a format matched.
    package var swiftProvider: String? = nil

    /// ``swiftProvider`` when nothing failed: a configuration to paste only once it works.
    package var swiftProviderToPaste: String? { verdict == .failure ? nil : swiftProvider }

    /// The worst verdict among the findings.
    package var verdict: Finding.Verdict { findings.map(\.verdict).max() ?? .ok }

    /// 0 when nothing failed, 1 when something did.
    package var exitCode: Int32 { verdict == .failure ? 1 : 0 }

    /// The report as aligned lines, each finding with its fix.
    package var text: String {
        var lines = ["fleetauth check-endpoint \(url) (\(scope))"]
        for finding in findings {
            let verdict = finding.verdict.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
            let check = finding.check.padding(toLength: 17, withPad: " ", startingAt: 0)
            lines.append("  \(verdict) \(check) \(finding.seen)")
            if !finding.fix.isEmpty { lines.append("  \(String(repeating: " ", count: 27))fix: \(finding.fix)") }
        }
        if let formatFlags, let swiftProviderToPaste {
            lines.append("  format: \(formatFlags); the app's provider, in Swift:")
            lines += swiftProviderToPaste.split(separator: "\n").map { "    \($0)" }
        } else if let formatFlags {
            lines.append("  format: \(formatFlags) (Swift: \(formatSwift ?? "?"))")
        }
        if let tokenFingerprint {
            lines.append("  token fingerprint \(tokenFingerprint) (the token itself is never printed)")
        }
        let failures = findings.filter { $0.verdict == .failure }.count
        let warnings = findings.filter { $0.verdict == .warning }.count
        if warnings > 0 {
            lines.append("  warnings are advisories: the SDK takes the token all the same; failures it refuses")
        }
        func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        lines.append(
            "result: \(verdict.rawValue) (\(counted(failures, "failure")), \(counted(warnings, "warning")), \(counted(findings.count, "check")))"
        )
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON object.
    package var json: String {
        let object: [String: Any] = [
            "url": url, "scope": scope.description, "verdict": verdict.rawValue,
            "format": formatFlags ?? NSNull(), "swiftFormat": formatSwift ?? NSNull(),
            "swiftProvider": swiftProviderToPaste ?? NSNull(),
            "tokenFingerprint": tokenFingerprint ?? NSNull(),
            "findings": findings.map {
                ["check": $0.check, "verdict": $0.verdict.rawValue, "seen": $0.seen, "fix": $0.fix]
            },
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
