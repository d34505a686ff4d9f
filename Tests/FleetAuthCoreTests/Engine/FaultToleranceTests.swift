import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Faults: flapping and down backends", .timeLimit(.minutes(10)))
struct FaultToleranceTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func flappingBackendServesEveryCallerWithinTheRetryBudget() async throws {
        let h = try EngineHarness(latency: 0.05, retry: RetryPolicy(jitter: 0.2))
        h.transport.setFaultInjector { _, index in index % 2 == 0 ? .status(503) : nil }
        let scopes = (0..<30).map { AuthorizationScope.vehicle("v-\($0)") }
        let engine = h.engine
        var served = 0
        for scope in scopes {  // vehicles come online one after another, ten callers each
            let result = await h.clock.runToCompletion(horizon: 10) {
                try await withThrowingTaskGroup(of: AuthToken.self) { group in
                    for _ in 0..<10 { group.addTask { try await engine.token(for: scope) } }
                    return try await group.reduce(into: [AuthToken]()) { $0.append($1) }
                }
            }
            let tokens = try result.get()
            #expect(tokens.allSatisfy { $0.scope == scope && $0.claims.covers(scope) })
            served += tokens.count
        }
        #expect(served == 300)
        // Each vehicle's first request meets a 503 and its retry succeeds: two requests each.
        #expect(h.transport.requestCount == 2 * scopes.count)
        #expect(h.backend.mintedCount == scopes.count)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func downBackendFailsEveryWaiterAlikeWithBoundedRequestsThenRecovers() async throws {
        let retry = RetryPolicy(maximumAttempts: 4, jitter: 0, deadline: 30, failureCooldown: 5)
        let h = try EngineHarness(latency: 0.05, retry: retry)
        h.transport.setFaultInjector { _, _ in .connectionFailure }
        let engine = h.engine
        let start = h.clock.now()
        let outcome = await h.clock.runToCompletion(horizon: 10) {
            await withTaskGroup(of: String.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        do {
                            _ = try await engine.token(for: .vehicle("v-1"))
                            return "served"
                        } catch {
                            return String(describing: error)
                        }
                    }
                }
                return await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
        }
        let errors = try outcome.get()
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("FleetAuthError.transportFailure") == true)
        #expect(h.transport.requestCount == retry.maximumAttempts)
        #expect(h.clock.now().timeIntervalSince(start) <= retry.deadline)
        // More callers during the cooldown cost no requests.
        for _ in 0..<10 { _ = try? await engine.token(for: .vehicle("v-1")) }
        #expect(h.transport.requestCount == retry.maximumAttempts)
        // The backend comes back: after the cooldown, service resumes without a restart.
        h.transport.setFaultInjector(nil)
        h.clock.advance(by: 5)
        let token = try await h.clock.runToCompletion { try await engine.token(for: .vehicle("v-1")) }.get()
        #expect(token.claims.covers(.vehicle("v-1")))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func releasedProvidersCompleteEveryCallback() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: 0.5)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        let completions = LockedState<[Bool]>([])
        do {
            let provider = try TokenProvider<VehicleContext>(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock)
            for index in 0..<100 {
                provider.fetchToken(with: VehicleContext(id: "v-\(index % 7)")) { token, error in
                    completions.withLock { $0.append(token != nil && error == nil) }
                }
            }
        }
        // The SDK starts the callbacks' tasks on the clock: move it through every deadline.
        await clock.run(until: clock.now().addingTimeInterval(10))
        #expect(completions.withLock { $0.count } == 100)
        #expect(completions.withLock { $0.allSatisfy { $0 } })
    }
}

/// A minimal context for tests of the core provider.
struct VehicleContext: AuthorizationContext {
    let id: String
    var scope: AuthorizationScope { .vehicle(id) }
}
