import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// Token states noted by many threads at once reach each stream in order, none dropped: a
/// thread that publishes the changes another noted must finish before a later change goes out.
@Suite("Token states published from many threads", .timeLimit(.minutes(10)))
struct StatePublicationTests {
    private struct Phone: AuthorizationContext {
        let id: String
        var scope: AuthorizationScope { .vehicle(id) }
    }

    @Test func everyChangeOfEveryScopeReachesItsStreamInOrder() async throws {
        let phones = (0..<16).map { Phone(id: "v-\($0)") }
        // 20 rounds of three changes fit a stream's buffer of 64, so a slow reader loses none.
        let rounds = 20
        let streams = try await Self.streams(of: phones, afterRounds: rounds)
        let expected: [TokenState.Phase] =
            [.noToken]
            + Array(repeating: [TokenState.Phase.refreshing, .fresh, .noToken], count: rounds).flatMap { $0 }
            + [.refreshing, .fresh, .signedOut]
        for (phone, stream) in zip(phones, streams) {
            var phases: [TokenState.Phase] = []
            for await state in stream { phases.append(state.phase) }
            #expect(phases == expected, "\(phone.id): \(phases)")
        }
    }

    /// The streams of `phones`, opened before each phone fetched and invalidated its token
    /// `rounds` times, all at once, then fetched one more and signed out. The provider is
    /// released on return, which ends the streams after what they hold: a missing state
    /// fails the test instead of leaving it waiting.
    private static func streams(of phones: [Phone], afterRounds rounds: Int) async throws -> [AsyncStream<TokenState>] {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token/driver/{vehicleId}")
        let provider = try TokenProvider<Phone>(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token/driver/{vehicleId}"), transport: transport,
            clock: clock)
        let streams = phones.map { provider.tokenStates(for: $0) }
        // Watchers of every scope that read nothing make each publication take longer, so
        // that one thread's publishing overlaps another's.
        let watchers = (0..<32).map { _ in provider.tokenStates() }
        defer { _ = watchers }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for phone in phones {
                group.addTask {
                    for _ in 0..<rounds {
                        // `refresh(for:)`: tokens rejected in a row hold `token(for:)` back.
                        let token = try await provider.refresh(for: phone)
                        provider.invalidate(token.value, for: phone)
                    }
                    _ = try await provider.token(for: phone)
                }
            }
            try await group.waitForAll()
        }
        provider.invalidateAll()
        await provider.waitUntilIdle()
        return streams
    }
}
