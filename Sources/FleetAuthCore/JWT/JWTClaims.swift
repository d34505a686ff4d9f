package import Foundation

/// The claims FleetAuth reads from a token's payload. The signature is not verified:
/// the client never holds the key, and the fleet service verifies it.
package struct JWTClaims: Sendable, Equatable {
    /// `alg` from the header, such as `RS256`.
    package var algorithm: String?

    /// Whether the header says the token is unsigned: no `alg`, an empty one, or `none` in
    /// any case. The fleet service accepts no such token, so neither the SDK nor the checker
    /// does, whatever follows the second dot.
    package var isUnsigned: Bool {
        guard let algorithm else { return true }
        return algorithm.isEmpty || algorithm.lowercased() == "none"
    }
    /// `kid` from the header.
    package var keyID: String?
    /// `iss`: the service account that signed the token.
    package var issuer: String?
    /// `sub`: usually the same service account.
    package var subject: String?
    /// `aud`: one or more audiences.
    package var audience: [String] = []
    /// `iat`: when the token was issued, by the issuer's clock.
    package var issuedAt: Date?
    /// `exp`: when the token expires, by the issuer's clock.
    package var expiresAt: Date?
    /// The private `authorization` claim: claim key (`vehicleid`, `tripid`, …) to the
    /// IDs it names. A single string becomes a one-element list.
    package var authorization: [String: [String]]

    /// Claims with only an `authorization` claim, for tests of coverage.
    package init(authorization: [String: [String]] = [:]) {
        self.authorization = authorization
    }

    /// The `authorization` claim as messages show it, `vehicleid: "v-42"; taskid: "t-1"`
    /// (each ID cut at 64 characters); empty when the claim is absent.
    package var authorizationSummary: String {
        authorization.sorted { $0.key < $1.key }.map { key, ids in
            "\(key): \(ids.map { "\"\($0.prefix(64))\"" }.joined(separator: ", "))"
        }.joined(separator: "; ")
    }

    /// The wildcard ID that matches every vehicle or trip.
    package static let wildcard = "*"

    /// The claim keys that name delivery tasks: `taskid` (one ID) and `taskids` (a list).
    package static let taskClaimKeys: Set<String> = ["taskid", "taskids"]

    /// Whether the `authorization` claim covers `scope`: one of the kind's claim keys
    /// names the scope's ID, or the wildcard `*`; and when the scope names a task and the
    /// token carries a task claim (`taskid` or a `taskids` list), that claim names the task
    /// or `*` (an empty list names none). A vehicle token without a task claim serves all of
    /// the vehicle's tasks. Keys compare case-insensitively.
    package func covers(_ scope: AuthorizationScope) -> Bool {
        var covered = false
        for (key, ids) in authorization where scope.kind.claimKeys.contains(key.lowercased()) {
            if ids.contains(scope.id) || ids.contains(Self.wildcard) { covered = true }
        }
        guard covered, let taskID = scope.taskID else { return covered }
        let taskClaims = authorization.filter { Self.taskClaimKeys.contains($0.key.lowercased()) }
        // A task claim present but empty names no task: it covers none.
        if taskClaims.isEmpty { return true }
        return taskClaims.values.contains { $0.contains(taskID) || $0.contains(Self.wildcard) }
    }

    /// Whether the claim covers `scope` through the wildcard and not by naming its ID.
    package func coversOnlyByWildcard(_ scope: AuthorizationScope) -> Bool {
        var wildcard = false
        for (key, ids) in authorization where scope.kind.claimKeys.contains(key.lowercased()) {
            if ids.contains(scope.id) { return false }
            if ids.contains(Self.wildcard) { wildcard = true }
        }
        return wildcard
    }

    /// The token's lifetime as issued (`exp − iat`), if both are present.
    package var issuedLifetime: TimeInterval? {
        guard let issuedAt, let expiresAt else { return nil }
        return expiresAt.timeIntervalSince(issuedAt)
    }
}
