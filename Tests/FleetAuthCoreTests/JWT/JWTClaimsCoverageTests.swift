import FleetAuthCore
import Foundation
import Testing

@Suite("Claims: what a token covers, and for which fleet flavor", .timeLimit(.minutes(10)))
struct JWTClaimsCoverageTests {
    @Test func anEmptyTaskListCoversNoTask() {
        let claims = JWTClaims(authorization: ["deliveryvehicleid": ["dv-1"], "taskids": []])
        #expect(!claims.covers(.vehicle("dv-1", taskID: "task-9")))
        // The vehicle itself is still covered.
        #expect(claims.covers(.vehicle("dv-1")))
    }

    @Test(
        arguments: [
            (["taskid": ["task-9"]], true), (["taskids": ["task-1", "task-9"]], true), (["taskids": ["*"]], true),
            (["taskids": ["task-1"]], false), (["taskid": []], false), (["TaskIDs": [String]()], false),
            ([:], true),
        ] as [([String: [String]], Bool)])
    func aTaskClaimMustNameTheTask(taskClaim: [String: [String]], covered: Bool) {
        var authorization = taskClaim
        authorization["deliveryvehicleid"] = ["dv-1"]
        #expect(JWTClaims(authorization: authorization).covers(.vehicle("dv-1", taskID: "task-9")) == covered)
    }

    @Test(arguments: [
        (FleetFlavor.onDemand, "deliveryvehicleid", true), (FleetFlavor.delivery, "vehicleid", true),
        (FleetFlavor.onDemand, "vehicleid", false), (FleetFlavor.delivery, "deliveryvehicleid", false),
        (FleetFlavor.delivery, "DeliveryVehicleId", false),
    ])
    func aVehicleTokenUnderTheOtherFlavorsKeyIsRefused(fleet: FleetFlavor, key: String, refused: Bool) throws {
        let claims = JWTClaims(authorization: [key: ["v-42"]])
        let violation = TokenRules(fleet: fleet).fleetViolation(in: claims, for: .vehicle("v-42"))
        #expect((violation != nil) == refused)
        if let violation {
            #expect(violation.reason == .fleetMismatch)
            #expect(violation.message.contains("under `\(key)`"))
            #expect(violation.message.contains("need `\(fleet.vehicleClaimKey)`"))
        }
    }

    /// A token that names the vehicle under both flavors' keys carries the key each fleet
    /// needs: neither refuses it, and it covers the vehicle.
    @Test(arguments: [FleetFlavor.onDemand, .delivery])
    func aVehicleNamedUnderBothFlavorsKeysIsAcceptedByEither(fleet: FleetFlavor) {
        let claims = JWTClaims(authorization: ["vehicleid": ["v-42"], "deliveryvehicleid": ["v-42"]])
        #expect(TokenRules(fleet: fleet).fleetViolation(in: claims, for: .vehicle("v-42")) == nil)
        #expect(claims.covers(.vehicle("v-42")))
    }

    @Test func tripsAreNotJudgedByTheVehicleFlavor() {
        let claims = JWTClaims(authorization: ["tripid": ["t-1"]])
        #expect(TokenRules(fleet: .delivery).fleetViolation(in: claims, for: .trip("t-1")) == nil)
    }
}
