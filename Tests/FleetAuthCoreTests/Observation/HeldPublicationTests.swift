import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// While one thread publishes the token states it took, a change another thread notes waits
/// behind that publication: it cannot overtake it, so streams hear changes in the order noted.
/// The publication is held open through the engine's test seam, which makes an overtaking
/// publication show every run instead of by chance.
@Suite("A token-state publication held open")
struct HeldPublicationTests {
    private struct Phone: AuthorizationContext {
        let id: String
        var scope: AuthorizationScope { .vehicle(id) }
    }

    /// Holds the first publication of a chosen state until released, and records which
    /// states were published while it was held.
    private final class Gate: Sendable {
        private struct State {
            var held: AuthorizationScope?
            var heldOnce = false
            var publishedWhileHeld: [AuthorizationScope] = []
            var holding = false
        }
        private let state = LockedState(State())
        let reached = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let otherPublished = DispatchSemaphore(value: 0)

        /// Holds the next `noToken` state of `scope` that is published.
        func hold(_ scope: AuthorizationScope) { state.withLock { $0.held = scope } }

        var publishedWhileHeld: [AuthorizationScope] { state.withLock { $0.publishedWhileHeld } }

        /// The seam's body: runs on the publishing thread before each state goes out.
        func beforePublishing(_ change: TokenState) {
            let action = state.withLock { state -> Int in
                if state.holding {
                    state.publishedWhileHeld.append(change.scope)
                    return 1
                }
                guard !state.heldOnce, change.scope == state.held, change.phase == .noToken else { return 0 }
                state.heldOnce = true
                state.holding = true
                return 2
            }
            if action == 1 { otherPublished.signal() }
            guard action == 2 else { return }
            reached.signal()
            // Bounded, so that a broken test cannot hang the suite.
            _ = released.wait(timeout: .now() + 30)
            state.withLock { $0.holding = false }
        }
    }

    @Test func aChangeNotedDuringAPublicationGoesOutAfterIt() async throws {
        let gate = Gate()
        let first = Phone(id: "v-1")
        let second = Phone(id: "v-2")
        var states: [TokenState] = []
        for await state in try await Self.streamWhileHeld(gate: gate, first: first, second: second) {
            states.append(state)
        }
        #expect(
            gate.publishedWhileHeld.isEmpty, "published while another publication was held: \(gate.publishedWhileHeld)")
        let order = states.filter { $0.phase == .noToken }.map(\.scope)
        #expect(order == [first.scope, second.scope], "noToken states in the order streamed: \(order)")
    }

    /// Fetches a token for each phone, opens a stream of every scope, then invalidates the
    /// first phone's token on one thread, held inside its publication, and the second's on
    /// another. Returns the stream; the provider is released on return, which ends the stream
    /// after what it holds, so that a missing state fails the test instead of leaving it waiting.
    private static func streamWhileHeld(
        gate: Gate, first: Phone, second: Phone
    ) async throws -> AsyncStream<TokenState> {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token/driver/{vehicleId}")
        var configuration = TokenProviderConfiguration(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token/driver/{vehicleId}"), transport: transport,
            clock: clock)
        configuration.beforePublishingState = { gate.beforePublishing($0) }
        let provider = try TokenProvider<Phone>(configuration: configuration)
        let firstToken = try await provider.token(for: first)
        let secondToken = try await provider.token(for: second)
        let stream = provider.tokenStates()
        gate.hold(first.scope)
        // Plain threads, so that the held publication blocks no thread of the task pool.
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            Thread {
                let firstDone = DispatchSemaphore(value: 0)
                let secondDone = DispatchSemaphore(value: 0)
                Thread {
                    _ = provider.invalidate(firstToken.value, for: first)
                    firstDone.signal()
                }.start()
                if gate.reached.wait(timeout: .now() + 30) == .success {
                    Thread {
                        _ = provider.invalidate(secondToken.value, for: second)
                        secondDone.signal()
                    }.start()
                    // An overtaking publication of the second change shows well within this.
                    _ = gate.otherPublished.wait(timeout: .now() + 1)
                }
                gate.released.signal()
                _ = firstDone.wait(timeout: .now() + 30)
                _ = secondDone.wait(timeout: .now() + 30)
                finished.resume()
            }.start()
        }
        return stream
    }
}
