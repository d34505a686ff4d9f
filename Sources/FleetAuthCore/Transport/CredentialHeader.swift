import Foundation

/// Which request headers carry a credential: for messages that tell a credential the
/// backend refused from none sent, and for output that must not show one.
package enum CredentialHeader {
    /// Words that make a header's name a credential's: `Authorization`, `Cookie`,
    /// `X-Api-Key`, `X-Session-Token` and the like.
    static let nameWords = ["auth", "cookie", "key", "token", "secret", "session", "credential", "password"]

    /// Whether a header named `name` carries a credential, by its name alone.
    package static func isCredential(named name: String) -> Bool {
        let lowered = name.lowercased()
        return nameWords.contains { lowered.contains($0) }
    }

    /// Whether the header `name: value` may hold a credential: by its name, or by a value
    /// that starts with an authentication scheme (`Bearer …`) or holds a token-shaped run
    /// (16 or more base64url, dot or slash characters).
    package static func mayHoldCredential(named name: String, value: String) -> Bool {
        if isCredential(named: name) { return true }
        if scheme(of: value) != nil { return true }
        return value.range(of: "[A-Za-z0-9_=.+/-]{16,}", options: .regularExpression) != nil
    }

    /// Whether any of `headers` carries a credential, by name.
    package static func carriesCredential(_ headers: [String: String]) -> Bool {
        headers.keys.contains(where: isCredential(named:))
    }

    /// The authentication scheme a value starts with (`Bearer`, `Basic`, …), if it does.
    package static func scheme(of value: String) -> String? {
        let schemes = ["Bearer", "Basic", "Token", "Digest", "Negotiate", "ApiKey"]
        guard let space = value.firstIndex(of: " ") else { return nil }
        let first = value[..<space]
        return schemes.first { $0.caseInsensitiveCompare(first) == .orderedSame }.map { _ in String(first) }
    }
}
