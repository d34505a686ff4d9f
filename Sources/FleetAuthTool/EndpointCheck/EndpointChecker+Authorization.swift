import FleetAuthCore
import Foundation

/// The check of the token's `authorization` claim: the fleet flavor, the requested ID and
/// task, the wildcard, and a token for another kind of object.
extension EndpointChecker {
    func checkAuthorization(_ claims: JWTClaims, into findings: inout [Finding]) {
        let scope = options.scope
        let rules = self.rules(for: claims)
        if rules.fleetViolation(in: claims, for: scope) != nil {
            findings.append(fleetMismatchFinding(rules.fleet))
            return
        }
        if let inferred = inferredFleetFinding(claims) { findings.append(inferred) }
        let keys = scope.kind == .vehicle ? [rules.fleet.vehicleClaimKey] : scope.kind.claimKeys
        let named = claims.authorization.filter { keys.contains($0.key.lowercased()) }
        let granted = named.flatMap(\.value)
        if granted.contains(scope.id) {
            guard claims.covers(scope) else {
                let tasks = claims.authorization.filter { JWTClaims.taskClaimKeys.contains($0.key.lowercased()) }
                let shown = tasks.map { "\($0.key): \($0.value.isEmpty ? "[]" : $0.value.joined(separator: ", "))" }
                findings.append(
                    Finding(
                        "authorization", .failure,
                        "names \(scope.kind) \(scope.id), but its task claim (\(shown.sorted().joined(separator: "; "))) does not name task \(scope.taskID ?? "")",
                        fix:
                            "mint the token with taskid (or taskids) naming the requested task, or without a task claim"
                    ))
                return
            }
            let key = named.keys.sorted().joined(separator: ", ")
            findings.append(Finding("authorization", .ok, "covers \(scope) under `\(key)`"))
        } else if granted.contains(JWTClaims.wildcard) {
            findings.append(
                rules.wildcardViolation(in: claims, for: scope) == nil
                    ? Finding(
                        "authorization", .warning, "wildcard \"*\" (allowed by --allow-wildcard)",
                        fix: "mint tokens for one \(scope.kind) in apps")
                    : Finding(
                        "authorization", .failure, "wildcard \"*\": one phone could act on every \(scope.kind)",
                        fix: "mint the token for the requested ID, or pass --allow-wildcard for a trusted server"))
        } else if let (kind, key) = claims.otherKind(naming: scope) {
            findings.append(
                Finding(
                    "authorization", .failure,
                    "a \(kind) token for this ID (\(key): \"\(scope.id)\"), not a \(scope.kind) token: the URL looks like a \(kind.tokenRoute)",
                    fix:
                        "\(scope.kind.provider) needs the \(scope.kind.tokenRoute), whose tokens name the \(scope.kind) under `\(keys[0])`: point --url at it"
                ))
        } else {
            let named = claims.authorizationSummary
            let inQuery = (try? URLTemplate(options.url))?.namesTheID == false
            let sent =
                inQuery
                ? "; the ID went as the query item \(scope.kind.queryItemName)=\(scope.id), added because --url has no placeholder: make the backend read it, or put \(URLTemplate.placeholderList(for: [scope.kind])) in --url"
                : ""
            findings.append(
                Finding(
                    "authorization", .failure,
                    named.isEmpty ? "no authorization claim" : "does not name \(scope) (\(named))",
                    fix: "mint the token for the requested ID under authorization.\(scope.kind.claimKeys[0])\(sent)"))
        }
    }
}
