import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// Over a transport that is not in process, each update runs in a task of its own, which
/// ends with it; through the in-memory doubles it runs in the caller's task.
@Suite("Vehicle reporter: the update's task", .timeLimit(.minutes(1)))
struct VehicleReporterUpdateTaskTests {
    /// The hash of the task that runs the call, seen from the fleet service's route.
    private static func taskSendingUpdates(of f: ReporterFixture) -> LockedState<Int?> {
        let seen = LockedState<Int?>(nil)
        f.transport.route("/v1/providers/demo-project/vehicles/{vehicleId}", method: "PUT") { _ in
            seen.withLock { $0 = withUnsafeCurrentTask { $0?.hashValue } }
            return TransportResponse(status: 200, headers: [:], body: Data("{}".utf8))
        }
        return seen
    }

    @Test(arguments: [false, true])
    func anUpdateRunsInATaskOfItsOwnOnlyOverATransportNotInProcess(relayed: Bool) async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", relayed: relayed)
        let sender = Self.taskSendingUpdates(of: f)
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        for step in 0..<2 {  // the first update waits for its token, the second finds it cached
            sender.withLock { $0 = nil }
            #expect(try await reporter.report(f.location(step)).status == 200)
            let seen = try #require(sender.withLock { $0 })
            #expect((seen != caller) == relayed, "update \(step)")
        }
    }

    /// A value the caller binds, to see whether it reaches the call.
    @TaskLocal private static var trace: String?

    /// The documented promise of `report(_:)`: the update's task, when it has one, inherits
    /// the caller's task-local values and priority. The base priority, not the current one: a
    /// caller waiting for a task raises that task's current priority to its own anyway.
    @Test(arguments: [false, true])
    func theCallSeesTheCallersTaskLocalsAndPriority(relayed: Bool) async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", relayed: relayed)
        let seen = LockedState<[(trace: String?, priority: TaskPriority?)]>([])
        f.transport.route("/v1/providers/demo-project/vehicles/{vehicleId}", method: "PUT") { _ in
            seen.withLock { $0.append((Self.trace, Task.basePriority)) }
            return TransportResponse(status: 200, headers: [:], body: Data("{}".utf8))
        }
        let caller = Task(priority: .high) {
            try await Self.$trace.withValue("vehicle v-42") {
                for step in 0..<2 { _ = try await reporter.report(f.location(step)) }  // token fetched, then cached
                return Task.basePriority
            }
        }
        let callerPriority = try await caller.value
        #expect(callerPriority == .high)
        let calls = seen.withLock { $0 }
        #expect(calls.count == 2)
        for (step, call) in calls.enumerated() {
            #expect(call.trace == "vehicle v-42", "update \(step)")
            #expect(call.priority == callerPriority, "update \(step)")
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func cancellingAnUpdateInFlightCancelsItsCall() async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", relayed: true)
        _ = try await reporter.report(f.location())  // warm the token: 2 requests
        f.transport.latency = 1
        let ended = LockedState<(any Error)?>(nil)
        let update = f.clock.startSimulated {
            do { _ = try await reporter.report(f.location(1)) } catch { ended.withLock { $0 = error } }
        }
        try await f.clock.settledSleepers(count: 1, within: 2)  // the call is in flight
        update.cancel()
        // Ended once the clock's work settled, without the clock moving: the cancel reached the
        // call in the update's task (one it missed would end at the latency, after a move).
        let uptime = f.clock.uptime()
        let error = try await f.clock.settled { ended.withLock { $0 } }
        #expect((error as? FleetServiceError)?.underlyingError is CancellationError, "\(String(describing: error))")
        #expect(f.clock.uptime() == uptime)
        #expect(f.fleet.acceptedCount == 1)
        // The turn was given back: the next update goes out at once (a turn kept would fail
        // this when the clock's work settles, not at the time limit).
        f.transport.latency = 0
        #expect(try await f.clock.atOnce { try await reporter.report(f.location(2)) }.status == 200)
    }
}
