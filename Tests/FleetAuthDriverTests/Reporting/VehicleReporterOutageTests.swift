import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Vehicle reporter through token-backend outages", .timeLimit(.minutes(10)))
struct VehicleReporterOutageTests {
    /// Reports every 5 s from the refresh window on, with the token endpoint answering 503
    /// from `outageStart` (seconds after the first token) for `duration` seconds.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func run(outageStart: TimeInterval, duration: TimeInterval, until end: TimeInterval) async throws
        -> (accepted: Int, failures: [(time: TimeInterval, error: FleetServiceError)])
    {
        let f = try ReporterFixture()
        let origin = f.clock.uptime()
        let clock = f.clock
        f.transport.setFaultInjector { request, _ in
            let time = clock.uptime() - origin
            guard request.url.path.hasPrefix("/driver-token"), time >= outageStart, time < outageStart + duration
            else { return nil }
            return .status(503)
        }
        let reporter = try f.reporter("v-42")
        var accepted = 0
        var failures: [(TimeInterval, FleetServiceError)] = []
        var time: TimeInterval = 0
        while time < end {
            await f.clock.advanceSettled(to: origin + time)
            let location = f.location()
            let result = await f.clock.runToCompletion(horizon: 10) { try await reporter.report(location) }
            switch result {
            case .success: accepted += 1
            case .failure(let error as FleetServiceError): failures.append((time, error))
            case .failure(let error): Issue.record("unexpected \(error)")
            }
            time = time == 0 ? 2900 : time + 5  // fresh-token lookups before the window change nothing
        }
        return (accepted, failures)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFiveMinuteOutageAtTheRefreshMomentLosesNoUpdate() async throws {
        for start in stride(from: 3150.0, through: 3250, by: 25) {
            let outcome = try await run(outageStart: start, duration: 300, until: start + 420)
            #expect(
                outcome.failures.isEmpty, "outage from \(start) s: \(outcome.failures.first?.error.description ?? "")")
            #expect(outcome.accepted > 100)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anUpdateLostToALongOutageNamesTheOutageNotARejection() async throws {
        let outcome = try await run(outageStart: 3150, duration: 900, until: 3700)
        let failure = try #require(outcome.failures.first)
        #expect(failure.time >= 3540)  // only once the token is past its 60-s floor
        #expect(failure.error.fault == .token)
        #expect(failure.error.status == nil)  // the fleet service was never called
        let cause = try #require(failure.error.underlyingError as? FleetAuthError)
        #expect(cause.reason == .unexpectedStatus && cause.status == 503)
        #expect(failure.error.message.contains("The token backend has been failing for "))
        #expect(!failure.error.message.contains("refused"))
    }
}
