import FleetAuthConsumer
import Testing

/// A consumer context names exactly one of a trip, a tracking ID or a task, and says which.
@Suite("Consumer authorization context", .timeLimit(.minutes(10)))
struct ConsumerAuthorizationContextTests {
    @Test func eachContextNamesOneThingAndReadsItBack() {
        let trip = ConsumerAuthorizationContext(tripID: "t-7")
        #expect(trip == .trip("t-7"))
        #expect(trip.tripID == "t-7" && trip.trackingID == nil && trip.taskID == nil)
        #expect(trip.scope == AuthorizationScope(kind: .trip, id: "t-7"))
        let tracking = ConsumerAuthorizationContext.tracking("s-1")
        #expect(tracking.trackingID == "s-1" && tracking.tripID == nil && tracking.taskID == nil)
        #expect(tracking.scope.kind == .tracking && "\(tracking)" == "tracking ID s-1")
        let task = ConsumerAuthorizationContext.task("k-3")
        #expect(task.taskID == "k-3" && task.tripID == nil && task.trackingID == nil)
        #expect(task.scope.kind == .task)
    }
}
