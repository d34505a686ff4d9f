import FleetAuthCore
import Foundation

/// The fleet flavor a vehicle token is judged for: the one `--fleet` names, or without it
/// the one the token's own claim key names.
extension EndpointChecker {
    /// The flavor `claims` are judged for, and whether it was inferred from them: `--fleet`
    /// when given; otherwise the flavor whose claim key alone names the vehicle (a token
    /// with `deliveryvehicleid` and no `vehicleid` is a delivery token), else on-demand,
    /// the SDK's default (`inferred` is false then: the app needs no setting for it).
    func fleet(for claims: JWTClaims) -> (flavor: FleetFlavor, inferred: Bool) {
        if let given = options.fleet { return (given, false) }
        let standard = FleetFlavor.onDemand
        guard TokenRules(fleet: standard).fleetViolation(in: claims, for: options.scope) != nil else {
            return (standard, false)
        }
        return (standard.other, true)
    }

    /// ``rules`` with the fleet ``fleet(for:)`` finds for `claims`.
    func rules(for claims: JWTClaims) -> TokenRules {
        var rules = self.rules
        rules.fleet = fleet(for: claims).flavor
        return rules
    }

    /// The line that says which fleet a token without `--fleet` was judged for, when its
    /// claim key names a flavor other than the SDK's default; `nil` otherwise.
    func inferredFleetFinding(_ claims: JWTClaims) -> Finding? {
        let (flavor, inferred) = fleet(for: claims)
        guard inferred else { return nil }
        return Finding(
            "fleet", .ok,
            "\(flavor), inferred from the token's `\(flavor.vehicleClaimKey)` claim (no --fleet given): the app needs `TokenRules(fleet: \(Self.swift(flavor)))`"
        )
    }

    /// The failure for a vehicle token of the other flavor than `--fleet` names.
    func fleetMismatchFinding(_ fleet: FleetFlavor) -> Finding {
        let other = fleet.other
        return Finding(
            "authorization", .failure,
            "names the vehicle under `\(other.vehicleClaimKey)` (\(other) fleets); \(fleet == .delivery ? "a" : "an") \(fleet) vehicle needs `\(fleet.vehicleClaimKey)`",
            fix: "mint the token for the \(fleet) fleet, or pass --fleet \(other) if the vehicle is \(other)")
    }

    /// `.onDemand` or `.delivery`: the flavor as Swift names it.
    static func swift(_ flavor: FleetFlavor) -> String {
        flavor == .delivery ? ".delivery" : ".onDemand"
    }
}
