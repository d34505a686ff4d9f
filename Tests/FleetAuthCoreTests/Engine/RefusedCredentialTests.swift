import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Bad days: a refused credential backs off", .timeLimit(.minutes(10)))
struct RefusedCredentialTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [401, 403])
    func aRefusedCredentialIsAskedAtMost20TimesAVehicleHour(status: Int) async throws {
        let s = try RefusalSimulation(status: status)
        #expect(await s.lookUp(until: 7200) == nil)
        let times = s.requestTimes
        let first = times.filter { $0 < 3600 }.count
        let second = times.filter { $0 >= 3600 }.count
        // Measured: 17 and 12 (the cooldown alone made it 360 an hour).
        #expect(first <= 20 && second <= 20, "\(first) and \(second) requests in the two hours")
        // The waits double to the cap: none longer than 5 min plus its jitter and a lookup.
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // Each gap is the wait (jitter ±10 % from the second) up to the next lookup 5 s apart.
        for (gap, wait) in zip(gaps, [5.0, 10, 20, 40, 80, 160]) {
            #expect(gap >= wait * 0.9 && gap <= wait * 1.1 + 5.2, "\(gaps)")
        }
        #expect(gaps.allSatisfy { $0 <= 330 + 5 }, "\(gaps)")
        #expect(gaps.suffix(10).allSatisfy { $0 >= 270 }, "\(gaps)")
    }

    /// The worst moment for the credential to be accepted again is just after a refused
    /// request: the next goes after the longest wait.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTokenComesWithinSixMinutesOfTheCredentialBeingAcceptedAgain() async throws {
        let probe = try RefusalSimulation()
        await probe.lookUp(until: 7200)
        let moments = probe.requestTimes.suffix(4).map { $0 + 0.5 } + [1000, 4321]
        for accepted in moments {
            let s = try RefusalSimulation()
            await s.lookUp(until: accepted)
            s.refuses(false)
            let token = try #require(await s.lookUp(until: accepted + 600), "no token after \(accepted) s")
            // Measured: at most 5 min 25 s (accepted just after a refused request).
            #expect(token - accepted <= 360, "accepted at \(accepted) s, token at \(token) s")
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func refreshAsksAtOnceAndStartsTheBackoffOver() async throws {
        let s = try RefusalSimulation()
        await s.lookUp(until: 1800)
        let asked = s.requestTimes.count
        s.refuses(false)
        // A lookup is still held back…
        let served = try await s.clock.atOnce { [s] in
            do {
                _ = try await s.provider.token(for: s.truck)
                return true
            } catch {
                return false
            }
        }
        #expect(!served && s.requestTimes.count == asked)
        // …and `refresh(for:)` asks at once.
        let result = await s.clock.runToCompletion(horizon: 1) { [s] in try await s.provider.refresh(for: s.truck) }
        _ = try result.get()
        #expect(s.requestTimes.count == asked + 1)
        // Refused again later: the first wait is the cooldown again, not the long one.
        s.provider.invalidateAll()
        s.refuses(true)
        await s.lookUp(until: s.time + 30)
        let gaps = zip(s.requestTimes.dropFirst(asked + 1), s.requestTimes.dropFirst(asked + 2)).map { $1 - $0 }
        // The cooldown, then 10 s ± 10 %, each up to the next lookup.
        #expect(gaps.count == 2 && gaps[0].rounded() == 10 && (10...15).contains(gaps[1].rounded()), "\(gaps)")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aRefreshThatIsRefusedAgainStartsFromTheCooldown() async throws {
        let s = try RefusalSimulation()
        await s.lookUp(until: 1800)
        let result = await s.clock.runToCompletion(horizon: 1) { [s] in try await s.provider.refresh(for: s.truck) }
        #expect(throws: FleetAuthError.self) { try result.get() }
        let state = s.provider.tokenState(for: s.truck)
        let next = try #require(state.nextAttemptAt)
        #expect(next.timeIntervalSince(s.clock.now()).rounded() == 5)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aSignOutStartsTheBackoffOver() async throws {
        let s = try RefusalSimulation()
        await s.lookUp(until: 1800)
        let asked = s.requestTimes.count
        s.provider.invalidateAll()
        _ = await s.clock.runToCompletion(horizon: 1) { [s] in try await s.provider.token(for: s.truck) }
        #expect(s.requestTimes.count == asked + 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aSuccessStartsTheBackoffOver() async throws {
        let s = try RefusalSimulation()
        await s.lookUp(until: 1800)
        s.refuses(false)
        let token = try #require(await s.lookUp(until: 2400))
        // The next refusal, an hour later, waits the cooldown first.
        s.provider.invalidateAll()
        s.refuses(true)
        let before = s.requestTimes.count
        await s.lookUp(until: token + 30)
        let times = Array(s.requestTimes.dropFirst(before))
        // The cooldown, then 10 s ± 10 %, each up to the next lookup.
        let gaps = zip(times.dropFirst(), times).map { ($0 - $1).rounded() }
        #expect(gaps.count == 2 && gaps[0] == 10 && (10...15).contains(gaps[1]), "\(times)")
    }

    /// The screen sees the failure, then when the next attempt comes, once per request: not
    /// a `refreshing` and a `failed` at every request, and never a wait it was not told of.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aScreenSeesTheRepeatedRefusalWithEachNextAttempt() async throws {
        let s = try RefusalSimulation()
        let start = s.clock.now()
        let watcher = StateWatcher(s.provider.tokenStates(for: s.truck), on: s.clock)
        await s.lookUp(until: 1800)
        await s.clock.settle()
        let phases = watcher.states.map(\.phase)
        #expect(Array(phases.prefix(3)) == [.noToken, .refreshing, .failed], "\(watcher.states)")
        #expect(phases.dropFirst(2).allSatisfy { $0 == .failed }, "\(phases)")
        // One state per refusal, each with a later next attempt than the one before.
        let failures = Array(watcher.states.dropFirst(2))
        #expect(failures.count == s.requestTimes.count, "\(failures.count) states, \(s.requestTimes.count) requests")
        let attempts = failures.compactMap(\.nextAttemptAt)
        #expect(attempts.count == failures.count)
        #expect(zip(attempts.dropFirst(), attempts).allSatisfy { $0 > $1 })
        #expect(failures.allSatisfy { $0.error?.status == 401 })
        // Told at the first refusal, 0.2 s in: the cooldown.
        let firstWait = try #require(attempts.first).timeIntervalSince(start) - 0.2
        #expect(abs(firstWait - 5) < 0.01)
        // The last one told is the one the state at this moment says.
        let now = s.provider.tokenState(for: s.truck)
        #expect(now.phase == .failed)
        #expect(now.nextAttemptAt == attempts.last)
        let next = try #require(now.nextAttemptAt).timeIntervalSince(s.clock.now())
        #expect(next > 0 && next <= 330)
        // The credential is accepted again: one more state.
        s.refuses(false)
        let told = watcher.states.count
        await s.lookUp(until: 2400)
        try await watcher.phases(count: told + 1)
        #expect(watcher.states.last?.phase == .fresh)
    }

    /// An hour of 503s with no token held (a fleet starting in an outage): at most 90
    /// requests, and the first token within 75 s of the backend's return.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anHourLongOutageCostsAboutARequestAMinuteAndEndsWithin75Seconds() async throws {
        let s = try RefusalSimulation(status: 503)
        #expect(await s.lookUp(until: 3600) == nil)
        let inOutage = s.requestTimes.count
        s.refuses(false)
        let firstToken = try #require(await s.lookUp(until: 3600 + 300))
        #expect(inOutage <= 90, "\(inOutage) requests in the hour")
        #expect(firstToken - 3600 <= 75, "first token \(firstToken - 3600) s after the return")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func transientFailuresBackOffToAboutAMinuteNeverToRefusalsFiveMinutes() async throws {
        let s = try RefusalSimulation(status: 503)
        await s.lookUp(until: 600)
        // The first fetch retries through its attempts; later ones make one attempt each,
        // at the next lookup once the gate's wait (doubling from 5 s to a minute) is over.
        let times = s.requestTimes
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 <= 66 + 5 }, "\(gaps)")
        #expect(gaps.suffix(4).allSatisfy { $0 >= 54 }, "\(gaps)")
        #expect((10...20).contains(times.count), "\(times.count)")
    }
}
