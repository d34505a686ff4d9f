import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// A phone's context in these simulations.
private struct Phone: AuthorizationContext {
    let id: String
    var scope: AuthorizationScope { .vehicle(id) }
}

/// Providers sharing one manual clock, as a fleet simulator builds them: with the public API
/// only. Each transport answers after its own latency, so the answers of one step come at
/// different moments.
private struct Simulation {
    let clock = ManualWallClock()
    let transports: [InMemoryTransport]
    let providers: [TokenProvider<Phone>]

    init(providers count: Int, latencies: [TimeInterval] = [0.2, 1.2, 2.2, 3.2, 5.2]) throws {
        let clock = self.clock
        let backend = InMemoryTokenBackend(clock: clock)
        let transports = latencies.map { latency in
            let transport = InMemoryTransport(clock: clock, latency: latency)
            transport.mount(backend, at: "/token/driver/{vehicleId}")
            return transport
        }
        let endpoint = TokenEndpoint(url: "https://backend.example.com/token/driver/{vehicleId}")
        self.transports = transports
        providers = try (0..<count).map { index in
            try TokenProvider<Phone>(endpoint: endpoint, transport: transports[index % latencies.count], clock: clock)
        }
    }
}

@Suite("Running a simulation to completion on a manual clock", .timeLimit(.minutes(10)))
struct RunToCompletionTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func lookupsRunWithAsyncLetWhoseAnswersCome5SecondsApartBothReturn() async throws {
        let s = try Simulation(providers: 2, latencies: [0.2, 5.2])
        let (a, b) = (s.providers[0], s.providers[1])
        let tokens = await s.clock.runToCompletion {
            async let first = a.token(for: Phone(id: "v-1"))
            async let second = b.token(for: Phone(id: "v-2"))
            return try await [first, second]
        }
        let pair = try tokens.get()
        #expect(pair.map(\.scope) == [.vehicle("v-1"), .vehicle("v-2")])
        #expect(abs(s.clock.uptime() - ManualWallClock().uptime() - 5.2) < 0.001)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aPrefetchBesideALookupReturns() async throws {
        let s = try Simulation(providers: 1, latencies: [1.2])
        let provider = s.providers[0]
        let result = await s.clock.runToCompletion {
            async let warmed = provider.prefetch([Phone(id: "v-2"), Phone(id: "v-3")])
            let token = try await provider.token(for: Phone(id: "v-1"))
            return (token.scope, await warmed.count)
        }
        let (scope, failures) = try result.get()
        #expect(scope == .vehicle("v-1") && failures == 0)
        #expect(s.transports[0].requestCount == 3)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aChildTaskThatParksWhileASiblingRunsIsWaitedFor() async throws {
        // One child sleeps on the clock while its sibling keeps running without sleeping;
        // the clock must not move until the sibling has parked too.
        let clock = ManualWallClock()
        let order = LockedState<[String]>([])
        let result = await clock.runToCompletion {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    try? await clock.sleep(for: 1)
                    order.withLock { $0.append("slept at \(clock.uptime() - ManualWallClock().uptime())") }
                }
                group.addTask {
                    for step in 0..<1000 where step.isMultiple(of: 10) { await Task.yield() }
                    order.withLock { $0.append("busy sibling done at \(clock.uptime() - ManualWallClock().uptime())") }
                }
            }
        }
        #expect(throws: Never.self) { try result.get() }
        #expect(order.withLock { $0 } == ["busy sibling done at 0.0", "slept at 1.0"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anOperationWaitingForNothingOnTheClockIsStalledAndSaysWhy() async throws {
        let clock = ManualWallClock()
        let result = await clock.runToCompletion {
            // A real sleep: no deadline on this clock will ever end it.
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
        }
        let stalled = try #require(throws: ManualWallClock.Stalled.self) { try result.get() }
        #expect(stalled.nextDeadline == nil)
        #expect("\(stalled)".contains("waits for nothing on this clock"))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aDeadlineBeyondTheHorizonIsStalledAndNamesTheHorizonToPass() async throws {
        let clock = ManualWallClock()
        let result = await clock.runToCompletion(horizon: 10) { try await clock.sleep(for: 30) }
        let stalled = try #require(throws: ManualWallClock.Stalled.self) { try result.get() }
        #expect(stalled.nextDeadline == 30 && stalled.horizon == 10)
        #expect("\(stalled)".contains("pass runToCompletion(horizon:) at least that"))
        #expect(clock.sleeperCount == 0)  // the operation was cancelled
    }

    /// A test's time limit cancels the test's task: a simulation driven by the clock must end
    /// then, not run on to its own end. The operation cancels its caller after 10 s of
    /// simulated time; it would otherwise sleep 10,000 times.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func cancellingTheCallerOfRunToCompletionCancelsTheOperationAndStopsTheClock() async throws {
        let clock = ManualWallClock()
        let caller = LockedState<Task<Result<Int, any Error>, Never>?>(nil)
        let started = clock.uptime()
        let task = Task {
            await clock.runToCompletion { () async throws -> Int in
                for step in 1...10_000 {
                    try await clock.sleep(for: 1)
                    if step >= 10 { caller.withLock { $0 }?.cancel() }
                }
                return 10_000
            }
        }
        caller.withLock { $0 = task }
        let result = await task.value
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.uptime() - started < 10_000)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func cancellingTheCallerOfRunUntilStopsTheClockWhereItIs() async throws {
        let clock = ManualWallClock()
        let caller = LockedState<Task<Void, Never>?>(nil)
        let started = clock.uptime()
        let ticker = clock.startSimulated {
            for step in 1...10_000 {
                try await clock.sleep(for: 1)
                if step >= 10 { caller.withLock { $0 }?.cancel() }
            }
        }
        let task = Task { await clock.run(until: clock.now().addingTimeInterval(10_000)) }
        caller.withLock { $0 = task }
        await task.value
        // Stopped after the ticker's 10th step, once the caller was there to cancel.
        #expect(clock.uptime() - started < 10_000)
        ticker.cancel()
    }

    /// Thousands of phones, each a provider, on one clock: every step is a task group of
    /// concurrent lookups with `async let` prefetches beside them, then a wait for every
    /// provider to be idle; refreshes, a backend outage and its retries come due in between.
    /// (`.ci/clock-stress` runs it many times in a row, under load and under the thread
    /// sanitizer; the suite's time limit turns a hang into a failure.)
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [2_001])
    func thousandsOfProvidersAndConcurrentCallersOnOneClockNeverHang(phones: Int) async throws {
        let s = try Simulation(providers: phones)
        let providers = s.providers
        for step in 0..<4 {
            if step == 2 {
                // The backend fails for 20 s: retries sleep on the clock and come back.
                for transport in s.transports {
                    transport.inject(.status(503), onPathsStartingWith: "/token", from: 0, for: 20)
                }
            }
            let served = await s.clock.runToCompletion(horizon: 60) {
                await withTaskGroup(of: Int.self) { group in
                    for (index, provider) in providers.enumerated() {
                        group.addTask {
                            async let warmed = provider.prefetch([Phone(id: "spare-\(index)")])
                            let token = try? await provider.token(for: Phone(id: "v-\(index)"))
                            _ = await warmed
                            return token == nil ? 0 : 1
                        }
                    }
                    return await group.reduce(0, +)
                }
            }
            // A step that serves too few has failed; the next would fail the same way, slowly.
            try #require(try served.get() == phones, "step \(step)")
            let idle = await s.clock.runToCompletion(horizon: 60) {
                for provider in providers { await provider.waitUntilIdle() }
            }
            #expect(throws: Never.self, "step \(step)") { try idle.get() }
            // Into the refresh window of the tokens just fetched.
            s.clock.advance(by: step == 0 ? 3_300 : 5)
        }
    }
}
