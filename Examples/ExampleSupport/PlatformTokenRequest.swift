import FleetAuthCore
public import PlatformSDK

/// One request a platform SDK stand-in made through an example's adapter, and how it ended:
/// what the adapter examples print and their tests check.
public struct PlatformTokenRequest: CustomStringConvertible, Sendable {
    /// What was asked for.
    public let label: String
    /// Whether the request should end with a token (else with an error).
    public let expectsToken: Bool
    /// How it ended.
    public let answer: PlatformTokenAnswer

    /// Records a request.
    public init(label: String, expectsToken: Bool, answer: PlatformTokenAnswer) {
        (self.label, self.expectsToken, self.answer) = (label, expectsToken, answer)
    }

    /// A token or an error as expected, the completion called exactly once and never inside
    /// the call.
    public var keptContract: Bool {
        answer.completions == 1 && !answer.calledSynchronously && (answer.token != nil) == expectsToken
            && (answer.error != nil) != expectsToken
    }

    /// `ok  label: token tok_… (1 completion, asynchronously)`, never the token itself.
    public var description: String {
        let outcome =
            answer.token.map { "token \(AuthToken.fingerprint(of: $0))" }
            ?? "error: \(answer.error ?? "none")"
        let manner = answer.calledSynchronously ? "inside the call" : "asynchronously"
        let verdict = keptContract ? "ok" : "BROKE THE CONTRACT"
        return "\(verdict)  \(label): \(outcome) (\(answer.completions) completion, \(manner))"
    }
}
