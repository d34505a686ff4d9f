import Foundation

/// The one rule for a URL that a token (or the app's credential) will travel to: `https`, or
/// plain `http` only to loopback unless the caller opted in. The token endpoint, the
/// fleet-service endpoint and authorized calls each judge their URL by it and say the verdict
/// in their own words.
package enum TokenCarryingURL {
    /// What the rule says about a URL.
    package enum Verdict: Equatable, Sendable {
        /// It may carry a token.
        case allowed
        /// No scheme or no host: not an absolute URL.
        case notAbsolute
        /// A scheme other than `http` and `https`.
        case unsupportedScheme(String)
        /// Plain `http` to a host that is not loopback, without the opt-in.
        case clearText(host: String)
    }

    /// The verdict for a URL with this `scheme` and `host`.
    package static func judge(scheme: String?, host: String?, allowsInsecureHTTP: Bool = false) -> Verdict {
        guard let scheme = scheme?.lowercased(), let host, !host.isEmpty else { return .notAbsolute }
        switch scheme {
        case "https": return .allowed
        case "http": return allowsInsecureHTTP || isLoopback(host) ? .allowed : .clearText(host: host)
        default: return .unsupportedScheme(scheme)
        }
    }

    /// Whether `host` is a loopback name or address: `localhost`, `127.0.0.0/8`, `::1`.
    package static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let octets = host.split(separator: ".")
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
