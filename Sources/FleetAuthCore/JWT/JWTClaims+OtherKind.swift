/// A token for the requested ID, but for another kind of object: a vehicle token where a
/// trip's was asked for, which a provider pointed at another kind's route receives.
extension JWTClaims {
    /// The other kind under whose claim key the `authorization` claim names `scope`'s ID
    /// (not through the wildcard), with the key as the token spells it; `nil` when none does.
    package func otherKind(naming scope: AuthorizationScope) -> (kind: AuthorizationScope.Kind, key: String)? {
        for kind in AuthorizationScope.Kind.all where kind != scope.kind {
            for (key, ids) in authorization.sorted(by: { $0.key < $1.key })
            where kind.claimKeys.contains(key.lowercased()) && ids.contains(scope.id) {
                return (kind, key)
            }
        }
        return nil
    }
}
