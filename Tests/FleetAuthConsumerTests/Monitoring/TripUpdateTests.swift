import FleetAuthConsumer
import Foundation
import Testing

/// A rider's screen that reads `TripMonitor.updates` is tested with updates made by hand.
@Suite("Trip updates an app's test builds", .timeLimit(.minutes(10)))
struct TripUpdateTests {
    @Test func anUpdateNamesWhatItFollowsAndCarriesItsResult() throws {
        let trip = ConsumerAuthorizationContext.trip("t-7").scope
        let snapshot = TripSnapshot(
            tripID: "t-7", status: "ENROUTE_TO_PICKUP", vehicleID: "v-42", remainingDistanceMeters: 1200,
            vehicleCoordinate: nil, receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let update = TripUpdate(scope: trip, result: .success(snapshot))
        #expect(update.followedID == "t-7" && update.scope == trip)
        #expect(try update.result.get().vehicleID == "v-42")
        let tracking = ConsumerAuthorizationContext.tracking("s-1").scope
        let failed = TripUpdate(
            scope: tracking, result: .failure(FleetServiceError(fault: .network, message: "no answer", scope: tracking))
        )
        #expect(failed.followedID == "s-1" && failed.scope.kind == .tracking)
    }
}
