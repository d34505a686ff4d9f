import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// A screen built from the stream says what a poll of `tokenState(for:)` says, also when
/// only the clock changed the state: a refused or degraded token running out with nobody
/// looking up.
@Suite("Token states the clock changes", .timeLimit(.minutes(10)))
struct TimeDrivenStateTests {
    let truck = TruckContext(vehicleID: "v-42")

    /// Looks up once, makes the backend answer `status` from then on, looks up once in the
    /// refresh window (the refresh fails), then lets only the clock run for two hours,
    /// comparing the stream's last state with a poll every 10 s.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func streamAndPollAgree(whenTheBackendAnswers status: Int) async throws -> [String] {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates(for: truck))
        _ = try await h.provider.token(for: truck)
        h.backendFails(status)
        // Settled at each step: the engine's own sleep starts as the clock's work runs.
        await h.clock.run(until: h.clock.now().addingTimeInterval(3600 - 500))
        _ = await h.clock.runToCompletion(horizon: 60) { [provider = h.provider, truck] in
            try await provider.token(for: truck)
        }
        let start = h.clock.now()
        var disagreements: [String] = []
        for step in 1...720 {
            await h.clock.run(until: start.addingTimeInterval(Double(step) * 10))
            let polled = h.provider.tokenState(for: truck)
            let streamed = try #require(watcher.states.last)
            if streamed.phase != polled.phase || streamed.tokenFingerprint != polled.tokenFingerprint {
                disagreements.append("\(step * 10) s: stream \(streamed.phase), poll \(polled.phase)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(2)) \(watcher.states)")
        return watcher.phases
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aRefusedTokenThatRunsOutIsFailedOnTheStreamAtThatMoment() async throws {
        let phases = try await streamAndPollAgree(whenTheBackendAnswers: 401)
        #expect(phases.contains("refreshRefused"))
        #expect(phases.last == "failed", "\(phases)")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aDegradedTokenThatReachesItsFloorIsFailedOnTheStreamAtThatMoment() async throws {
        let phases = try await streamAndPollAgree(whenTheBackendAnswers: 503)
        #expect(phases.contains("degraded"))
        #expect(phases.last == "failed", "\(phases)")
    }

    /// A stream over a fresh token that nobody looks up says `noToken` once it runs out.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFreshTokenNobodyLooksUpRunsOutOnTheStream() async throws {
        let h = try ProviderHarness()
        let watcher = h.watch(h.provider.tokenStates(for: truck))
        _ = try await h.provider.token(for: truck)
        await h.clock.run(until: h.clock.now().addingTimeInterval(7200))
        #expect(watcher.phases.last == "\(h.provider.tokenState(for: truck).phase)")
        #expect(watcher.phases.last == "noToken", "\(watcher.phases)")
    }
}
