public import Foundation

/// What the fleet service said when it refused a token (HTTP 401 or 403): carried as the
/// cause of a later `rejectedTokenReissued` error, so the service's own reason (such as
/// "Audience doesn't match") is not lost.
public struct TokenRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The fleet service's status, 401 or 403.
    public let status: Int
    /// The service's message: `error.message` (or a string `error`) of a JSON error body,
    /// else the body's text; at most 200 characters, never the token.
    public let message: String

    /// Creates a rejection with a message already read.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// Reads the service's message out of `body`, dropping any echo of `token`.
    public init(status: Int, body: Data, token: String) {
        var text = String(decoding: body, as: UTF8.self)
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            if let error = object["error"] as? [String: Any], let message = error["message"] as? String {
                text = message
            } else if let message = object["error"] as? String {
                text = message
            }
        }
        if !token.isEmpty { text = text.replacingOccurrences(of: token, with: "[token]") }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        self.init(status: status, message: text.count > 200 ? String(text.prefix(200)) + "…" : text)
    }

    /// `HTTP 401: Audience doesn't match`.
    public var description: String { message.isEmpty ? "HTTP \(status)" : "HTTP \(status): \(message)" }
}
