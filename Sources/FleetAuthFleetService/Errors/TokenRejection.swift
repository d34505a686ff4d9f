import FleetAuthCore
package import Foundation

/// What the fleet service said when it refused a token (HTTP 401 or 403): carried as the
/// cause of a later `rejectedTokenReissued` error, so the service's own reason (such as
/// "Audience doesn't match") is not lost.
package struct TokenRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The fleet service's status, 401 or 403.
    package let status: Int
    /// The service's message: `error.message` (or a string `error`) of a JSON error body,
    /// else the body's text; at most 200 characters, never the token.
    package let message: String

    /// Creates a rejection with a message already read.
    package init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// Reads the service's message out of `body`, dropping any echo of `token`: the whole
    /// value, any of its three parts, or any run of 16 or more of its characters.
    package init(status: Int, body: Data, token: String) {
        var text = String(decoding: body, as: UTF8.self)
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            if let error = object["error"] as? [String: Any], let message = error["message"] as? String {
                text = message
            } else if let message = object["error"] as? String {
                text = message
            }
        }
        if !token.isEmpty { text = Self.redacting(token, in: text) }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        text = text.count > 200 ? String(text.prefix(200)) + "…" : text
        self.init(status: status, message: text.escapingControlCharacters)
    }

    /// `HTTP 401: Audience doesn't match`, without a closing period, so that it reads
    /// inside a sentence.
    package var description: String {
        var text = message[...]
        while let last = text.last, last == "." || last.isWhitespace { text = text.dropLast() }
        return text.isEmpty ? "HTTP \(status)" : "HTTP \(status): \(text)"
    }

    /// `text` with the token, each of its parts and every run of 16 or more base64url
    /// characters found in it replaced.
    private static func redacting(_ token: String, in text: String) -> String {
        var text = text.replacingOccurrences(of: token, with: "[token]")
        for part in token.split(separator: ".") where part.count >= 8 {
            text = text.replacingOccurrences(of: part, with: "[token part]")
        }
        // A quoted fragment of a part: runs of the base64url alphabet that the token holds.
        var result = ""
        var run = ""
        func flush() {
            result += run.count >= 16 && token.contains(run) ? "[token part]" : run
            run = ""
        }
        for character in text {
            if character.isASCII, character.isLetter || character.isNumber || character == "-" || character == "_" {
                run.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return result
    }
}

extension FleetAuthError {
    /// The error for a call whose fresh token was the one the fleet service had just refused,
    /// naming what the service said about it.
    static func reissued(rejection: TokenRejection, scope: AuthorizationScope) -> FleetAuthError {
        FleetAuthError(
            reason: .rejectedTokenReissued,
            message:
                "The fleet service refused this token (\(rejection)), and asked for a new one the backend returned the same token, so a refetch cannot fix it: fix what the fleet service names (audience, claim key, IDs, project) in the backend's minting.",
            scope: scope, status: rejection.status, underlyingError: rejection)
    }
}
