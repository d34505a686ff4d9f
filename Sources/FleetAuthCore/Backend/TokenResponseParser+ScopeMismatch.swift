import Foundation

/// The error for a token whose `authorization` claim does not cover the requested scope.
extension TokenResponseParser {
    /// Why the token does not cover `scope`, and what to change: the route, when it names the
    /// requested ID under another kind's claim key (a provider pointed at another kind's
    /// route), with the key its tokens need (a vehicle's by ``rules``' fleet); else what it
    /// names and how the request named the ID (`url`).
    func scopeMismatch(_ claims: JWTClaims, scope: AuthorizationScope, url: URL?) -> FleetAuthError {
        if let (kind, key) = claims.otherKind(naming: scope) {
            let needed = scope.kind == .vehicle ? rules.fleet.vehicleClaimKey : scope.kind.claimKeys[0]
            return FleetAuthError(
                reason: .scopeMismatch,
                message:
                    "The token is a \(kind) token for this ID (\(key): \"\(scope.id)\"), not a \(scope.kind) token: the URL looks like a \(kind.tokenRoute); \(scope.kind.provider) needs the \(scope.kind.tokenRoute), whose tokens name the \(scope.kind) under `\(needed)`. Point the TokenEndpoint's `url` at it."
            )
        }
        let named = claims.authorizationSummary
        return FleetAuthError(
            reason: .scopeMismatch,
            message:
                "The token's `authorization` claim (\(named.isEmpty ? "absent" : named)) does not name \(scope). \(Self.howTheIDWasSent(url, scope: scope)) Mint the token for the ID in the request."
        )
    }

    /// Where the request named the ID: in the query, added because the URL has no
    /// placeholder, or in the path.
    static func howTheIDWasSent(_ url: URL?, scope: AuthorizationScope) -> String {
        let items = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        guard let item = items.first(where: { $0.value == scope.id }) else {
            return "The request named it in the URL's path."
        }
        return
            "The request named it as the query item `\(item.name)=\(scope.id)`, which FleetAuth adds when the TokenEndpoint's `url` has no placeholder: make the backend read it, or put \(URLTemplate.placeholderList(for: [scope.kind])) in the URL where the backend expects the ID."
    }
}
