import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

/// An app's own authorization whose completion comes from off the manual clock, as the
/// platform SDK's callbacks and most Objective-C-shaped providers complete.
final class OffClockAuthorization: DriverAuthorization {
    enum Route: Sendable, CaseIterable { case task, dispatchQueue, aSecondAndAHalfLater }
    let route: Route
    let token: String

    init(route: Route, token: String) {
        (self.route, self.token) = (route, token)
    }

    func fetchToken(
        with authorizationContext: DriverAuthorizationContext?, completion: @escaping AuthTokenFetchCompletionHandler
    ) {
        let token = self.token
        switch route {
        case .task: Task { completion(token, nil) }
        case .dispatchQueue: DispatchQueue.global().async { completion(token, nil) }
        case .aSecondAndAHalfLater: DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { completion(token, nil) }
        }
    }
}

@Suite("Work off the manual clock", .timeLimit(.minutes(10)))
struct OffClockAuthorizationTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [OffClockAuthorization.Route.task, .dispatchQueue], [10.0, 1.0])
    func aReporterWhoseAuthorizationCompletesOffTheClockRunsToCompletion(
        route: OffClockAuthorization.Route, horizon: TimeInterval
    ) async throws {
        let f = try ReporterFixture()
        let token = try await f.provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-42"))
        let reporter = try f.reporter("v-42", authorization: OffClockAuthorization(route: route, token: token))
        // Paid only when nothing comes back: under the thread sanitizer with the whole suite
        // running, a `Task {}` has waited more than the default 5 s for a thread.
        f.clock.offClockGrace = 60
        for step in 0..<3 {
            let result = await f.clock.runToCompletion(horizon: horizon) {
                try await reporter.report(f.location(step))
            }
            #expect(try result.get().status == 200)
        }
        #expect(f.fleet.calls.count == 3)
    }

    /// Work off the clock slower than the default grace completes once the grace is raised.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aSlowAuthorizationCompletesWithALongerGrace() async throws {
        let f = try ReporterFixture()
        let token = try await f.provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-42"))
        let authorization = OffClockAuthorization(route: .aSecondAndAHalfLater, token: token)
        let reporter = try f.reporter("v-42", authorization: authorization)
        f.clock.offClockGrace = 30
        let receipt = try await f.clock.runToCompletion { try await reporter.report(f.location()) }.get()
        #expect(receipt.status == 200)
    }

    /// With a horizon that reaches the 60-s provider deadline, the clock still does not move
    /// to that timeout while the work it bounds is off the clock and may come back.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theTimeoutOfWorkOffTheClockWaitsForThatWork() async throws {
        let f = try ReporterFixture()
        let token = try await f.provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-42"))
        let reporter = try f.reporter(
            "v-42", authorization: OffClockAuthorization(route: .aSecondAndAHalfLater, token: token))
        f.clock.offClockGrace = 30
        let start = f.clock.now()
        let receipt = try await f.clock.runToCompletion(horizon: 120) { try await reporter.report(f.location()) }.get()
        #expect(receipt.status == 200)
        #expect(f.clock.now() == start)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anOperationWaitingOffTheClockThatNeverAnswersIsStalledAndSaysSo() async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42", authorization: FleetCallErrorTests.SilentProvider())
        let result = await f.clock.runToCompletion(horizon: 1) { try await reporter.report(f.location()) }
        let stalled = try #require(throws: ManualWallClock.Stalled.self) { try result.get() }
        #expect(stalled.horizon == 1 && stalled.nextDeadline == 60 && stalled.offClockGrace == 5)
        #expect("\(stalled)".contains("may be waiting for work off the clock"), "\(stalled)")
        #expect("\(stalled)".contains("raise the clock's `offClockGrace`"), "\(stalled)")
    }
}
