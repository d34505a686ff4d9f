/// The fleet service's rules for a token that FleetAuth enforces beyond its form and
/// lifetime: the audience it is minted for, the fleet flavor whose claim key names the
/// vehicle, and whether a wildcard token may be used.
///
/// The SDK fails a fetch on the first rule a token breaks; `fleetauth check-endpoint` applies
/// the same rules and reports every one.
///
/// ```swift
/// // A fleet simulator on a trusted server, against a test project's own audience:
/// let rules = TokenRules(expectedAudience: "https://fleet.test.example/", allowsWildcard: true)
/// ```
public struct TokenRules: Sendable, Hashable {
    /// The audience the fleet service requires: `https://fleetengine.googleapis.com/`.
    public static let fleetServiceAudience = "https://fleetengine.googleapis.com/"

    /// The `aud` a token must name; `nil` skips the check. Default ``fleetServiceAudience``.
    public var expectedAudience: String?
    /// Whether a token whose `authorization` claim is the wildcard `"*"` may be used. Default
    /// `false`: a phone must not hold a token for every vehicle.
    public var allowsWildcard: Bool
    /// The fleet flavor the vehicles belong to, whose claim key a vehicle token must name its
    /// vehicle under. Default ``FleetFlavor/onDemand``.
    public var fleet: FleetFlavor

    /// Creates rules; the defaults are the fleet service's for on-demand apps on phones.
    ///
    /// - Parameters:
    ///   - expectedAudience: The `aud` a token must name; `nil` skips the check. Default
    ///     ``fleetServiceAudience``.
    ///   - allowsWildcard: Whether a token whose `authorization` claim is the wildcard `"*"` may be used.
    ///     Default `false`: a phone must not hold a token for every vehicle. Set it for trusted server-side
    ///     use, such as a fleet simulator.
    ///   - fleet: The fleet flavor the vehicles belong to: a vehicle token must name its vehicle under the
    ///     flavor's claim key (`vehicleid` on-demand, `deliveryvehicleid` for deliveries). Default
    ///     ``FleetFlavor/onDemand``.
    public init(
        expectedAudience: String? = fleetServiceAudience, allowsWildcard: Bool = false,
        fleet: FleetFlavor = .onDemand
    ) {
        self.expectedAudience = expectedAudience
        self.allowsWildcard = allowsWildcard
        self.fleet = fleet
    }

    /// The error for a vehicle token that names vehicles only under the other flavor's claim
    /// key (an on-demand token for a delivery vehicle, or the reverse); `nil` otherwise.
    package func fleetViolation(in claims: JWTClaims, for scope: AuthorizationScope) -> FleetAuthError? {
        guard scope.kind == .vehicle else { return nil }
        let keys = Set(claims.authorization.keys.map { $0.lowercased() })
        let needed = fleet.vehicleClaimKey
        let found = fleet.other.vehicleClaimKey
        guard !keys.contains(needed), keys.contains(found) else { return nil }
        return FleetAuthError(
            reason: .fleetMismatch,
            message:
                "The token names its vehicle under `\(found)`, the \(fleet.other) fleet's claim key, but this provider serves the \(fleet) fleet, whose tokens need `\(needed)`: the fleet service would refuse it. Mint the token for the \(fleet) fleet, or set TokenRules(fleet: .\(fleet == .delivery ? "onDemand" : "delivery")) if the vehicles are \(fleet.other) vehicles."
        )
    }

    /// The error for a token whose `aud` does not name `expectedAudience`; `nil` when
    /// it does or the check is off.
    package func audienceViolation(in claims: JWTClaims) -> FleetAuthError? {
        guard let expectedAudience, !claims.audience.contains(expectedAudience) else { return nil }
        let found = claims.audience.isEmpty ? "none" : claims.audience.map { "\"\($0)\"" }.joined(separator: ", ")
        let setting =
            if claims.audience.count == 1 {
                "or, if your fleet service expects \(found), set `TokenRules(expectedAudience: \(found))`"
            } else {
                "or, if your fleet service expects another audience, set it with `TokenRules(expectedAudience:)`"
            }
        return FleetAuthError(
            reason: .audienceMismatch,
            message:
                "The token's audience (aud: \(found)) is not \"\(expectedAudience)\", so the fleet service would reject it; mint it for that audience, \(setting)."
        )
    }

    /// The error for a token that covers `scope` only through the wildcard while
    /// wildcards are refused; `nil` otherwise.
    package func wildcardViolation(in claims: JWTClaims, for scope: AuthorizationScope) -> FleetAuthError? {
        guard !allowsWildcard, claims.coversOnlyByWildcard(scope) else { return nil }
        return FleetAuthError(
            reason: .wildcardRefused,
            message:
                "The token's `authorization` claim is the wildcard \"*\" (every \(scope.kind)); an app must get a token for its own \(scope.kind). Mint it for the requested ID, or allow wildcards for trusted server-side use."
        )
    }
}
