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

extension PlatformTokenRequest {
    /// Makes each of `asks` in turn through `ask` (an SDK stand-in's request for a context),
    /// and records how each ended.
    public static func make<Context>(
        _ asks: [(label: String, context: Context?, expectsToken: Bool)],
        through ask: (Context?) async -> PlatformTokenAnswer
    ) async -> [PlatformTokenRequest] {
        var requests: [PlatformTokenRequest] = []
        for (label, context, expectsToken) in asks {
            requests.append(PlatformTokenRequest(label: label, expectsToken: expectsToken, answer: await ask(context)))
        }
        return requests
    }

    /// Prints each request and a summary naming `contract`; the exit status: 0 when every
    /// request kept the contract, else 1.
    public static func report(_ requests: [PlatformTokenRequest], contract: String) -> Int32 {
        for request in requests { print(request) }
        let kept = requests.filter(\.keptContract).count
        print("summary: \(kept) of \(requests.count) requests kept \(contract)")
        return kept == requests.count ? 0 : 1
    }
}
