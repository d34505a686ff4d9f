import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// Simulations of whole outages. They move the manual clock from one deadline to the next,
/// letting the work each deadline wakes park again before the next (`ManualWallClock.settle()`),
/// so background retries happen at their own moments, under the thread sanitizer too.
@Suite("Bad days: riding out token-backend outages", .timeLimit(.minutes(10)))
struct OutageTests {
    /// The moment (seconds after the first token) a vehicle looking up every 5 s starts
    /// its first background refresh with the default policy: its second request.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func refreshMoment() async throws -> TimeInterval {
        let outcome = try await OutageSimulation().run(outage: 0..<0, until: 3400)
        return try #require(outcome.requestTimes.dropFirst().first)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theDefaultRefreshCostsAtMost28RequestsPerVehicleDay() async throws {
        let refresh = try await Self.refreshMoment()
        // Each one-hour token serves until its refresh: 86,400 s / that period, rounded up.
        let perDay = Int((86_400 / refresh).rounded(.up))
        #expect(perDay <= 28, "refresh after \(refresh) s: \(perDay) requests per vehicle-day")
        // …and leaves the outage tolerance plus the floor before the token ends.
        #expect(3600 - refresh >= 300 + 60)
    }

    static let durations: [TimeInterval] = [30, 120, 300, 600]

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: durations)
    func anOutageStartingAtAnyMomentFailsNoLookupWhileAUsableTokenIsCached(duration: TimeInterval) async throws {
        let refresh = try await Self.refreshMoment()
        // Across the hour once the first token is cached, and second by second around the
        // refresh moment.
        let starts = Array(stride(from: 300.0, to: 3600, by: 600)) + (-10...10).map { refresh.rounded() + Double($0) }
        let simulation = OutageSimulation()
        for start in starts {
            let outage = start..<(start + duration)
            let outcome = try await simulation.run(outage: outage, until: max(outage.upperBound, refresh) + 120)
            if duration <= 300 {
                #expect(
                    outcome.failures.isEmpty,
                    "outage \(outage): \(outcome.failures.count) failed lookups, first \(outcome.failures.first.map { "\($0)" } ?? "")"
                )
            }
            // Never a failure while a token with more than the 60-s floor is cached.
            for failure in outcome.failures {
                #expect((failure.cachedLife ?? 0) <= 60, "outage \(outage): failed at \(failure.time)")
            }
            #expect(outcome.shortestLifeServed >= 60)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func refusedConnectionsAreRiddenOutLike503s() async throws {
        let refresh = try await Self.refreshMoment()
        var simulation = OutageSimulation()
        simulation.refusesConnections = true
        let outage = (refresh - 1)..<(refresh + 299)
        let outcome = try await simulation.run(outage: outage, until: outage.upperBound + 60)
        #expect(outcome.failures.isEmpty)
        #expect(outcome.statistics.degradedServes > 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFleetMintedTogetherFailsOnlyPastTheFloorAndComesBackWithoutAHerd() async throws {
        let refresh = try await Self.refreshMoment()
        var simulation = OutageSimulation()
        simulation.vehicles = 100
        let outage = (refresh - 10)..<(refresh + 590)
        let outcome = try await simulation.run(outage: outage, until: outage.upperBound + 90)
        #expect(!outcome.failures.isEmpty)  // ten minutes is past the tolerance
        for failure in outcome.failures {
            #expect((failure.cachedLife ?? 0) <= 60, "failed at \(failure.time) with \(failure.cachedLife ?? 0) s left")
        }
        // Every lookup began at its moment: the figures below are on the clock's own axis.
        #expect(outcome.latestLookup < 1)
        // On return each vehicle makes one request once its gate opens (at most the 60-s
        // outage cap and its jitter after its last failed fetch), at its next lookup.
        let afterReturn = outcome.requestTimes.filter { $0 >= outage.upperBound }
        #expect(afterReturn.count == 100)
        #expect(afterReturn.allSatisfy { $0 - outage.upperBound <= 75 }, "\(afterReturn.max() ?? 0)")
        // Measured: 26 in the busiest second. These vehicles look up in step, every 5 s at
        // the same moments, so the requests come in those rounds; the gates' jitter spreads
        // them over a dozen rounds, not one.
        let peak = afterReturn.peakPerSecond
        #expect(peak <= 35, "peak \(peak) requests in one second on return")
        // While down, the backend sees about one request per vehicle per 12 s (measured:
        // 4,943 in the ten minutes), never more than one per longest backoff (8 s).
        let duringOutage = outcome.requestTimes.filter { outage.contains($0) }
        #expect(duringOutage.count <= 100 * 600 / 8)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTokenTheFleetServiceRejectedDuringAnOutageIsNeverServedAgain() async throws {
        let h = try EngineHarness(latency: 0.2)
        let v42 = AuthorizationScope.vehicle("v-42")
        let first = try await h.clock.runToCompletion(horizon: 10) { try await h.engine.token(for: v42) }.get()
        h.transport.setFaultInjector { _, _ in .status(503) }
        // Stale at 320 s left; 100 s later the refresh still fails: the degraded zone.
        h.clock.advance(by: 3280)
        _ = h.engine.cachedUsableToken(for: v42)  // stale: starts the refresh
        await h.clock.advanceSettled(to: h.clock.uptime() + 100)
        let degraded = try #require(h.engine.cachedUsableToken(for: v42))
        #expect(degraded == first)
        #expect(h.engine.statistics.degradedServes >= 1)
        // The fleet service refuses it: it is gone, outage or not.
        h.engine.invalidate(first.value, for: v42)
        for _ in 0..<10 {
            await h.clock.advanceSettled(to: h.clock.uptime() + 5)
            let result = await h.clock.runToCompletion(horizon: 10) { try await h.engine.token(for: v42) }
            #expect((try? result.get()) != first)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func strictPolicyNeverServesBelowTheContractMargin() async throws {
        let refresh = try await Self.refreshMoment()
        var simulation = OutageSimulation()
        simulation.refresh = RefreshPolicy(servesDuringOutages: false)
        simulation.refresh.spreadsRefreshes = false
        let outage = (refresh - 1)..<(refresh + 299)
        let outcome = try await simulation.run(outage: outage, until: outage.upperBound + 60)
        #expect(outcome.shortestLifeServed > 300)
        #expect(outcome.statistics.degradedServes == 0)
        // The strict refresh starts earlier, so it rides out the same outage at its margin.
        #expect(outcome.failures.isEmpty)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [403, 401, 400])
    func aPermanentFailureIsNeverRiddenOutDegraded(status: Int) async throws {
        let h = try EngineHarness(latency: 0.2)
        let v42 = AuthorizationScope.vehicle("v-42")
        _ = try await h.clock.runToCompletion(horizon: 10) { try await h.engine.token(for: v42) }.get()
        h.transport.setFaultInjector { _, _ in .status(status) }
        h.clock.advance(by: 3250)
        _ = h.engine.cachedUsableToken(for: v42)  // stale: the refresh fails for good
        await h.clock.advanceSettled(to: h.clock.uptime() + 100)
        // 250 s left: under the contract's 300, and the backend's answer was not transient.
        #expect(h.engine.cachedUsableToken(for: v42) == nil)
        let result = await h.clock.runToCompletion(horizon: 10) { try await h.engine.token(for: v42) }
        #expect(throws: FleetAuthError.self) { try result.get() }
        #expect(h.engine.statistics.degradedServes == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aLookupThatFailsInAnOutageSaysHowLongTheBackendHasBeenFailing() async throws {
        let refresh = try await Self.refreshMoment()
        let outage = (refresh - 10)..<(refresh + 590)
        let outcome = try await OutageSimulation().run(outage: outage, until: outage.upperBound)
        let failure = try #require(outcome.failures.last?.error as? FleetAuthError)
        #expect(failure.reason == .unexpectedStatus)
        #expect(failure.status == 503)
        #expect(failure.message.contains("The token backend has been failing for "))
        #expect(failure.message.contains(" min "))
    }

    @Test func degradedServingIsAWarningEventNamingTheCause() {
        let error = FleetAuthError(reason: .unexpectedStatus, message: "HTTP 503.", status: 503)
        let event = TokenEvent(.servedDegraded(.vehicle("v-42"), fingerprint: "tok_1", remaining: 212.4, reason: error))
        #expect(event.level == .warning)
        #expect(
            event.description
                == "servedDegraded vehicle v-42 tok_1 with 212 s left: the backend fails (unexpectedStatus HTTP 503)")
    }
}
