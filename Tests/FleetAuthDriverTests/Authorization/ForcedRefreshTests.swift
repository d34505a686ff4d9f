import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

/// A new token on demand, as a peer SDK's `refresh()` gives one.
@Suite("A new token on demand", .timeLimit(.minutes(10)))
struct ForcedRefreshTests {
    let vehicle = DriverAuthorizationContext(vehicleID: "v-42")

    @Test func refreshFetchesANewTokenThatLookupsThenGet() async throws {
        let f = try DriverFixture()
        let first = try await f.provider.token(for: vehicle)
        let second = try await f.provider.refresh(for: vehicle)
        #expect(second.value != first.value)
        #expect(try await f.provider.token(for: vehicle) == second)
        #expect(f.backend.mintedCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func concurrentRefreshesShareOneFetch() async throws {
        let f = try DriverFixture(latency: 0.5)
        _ = try await f.clock.runToCompletion { [provider = f.provider, vehicle] in
            try await provider.token(for: vehicle)
        }.get()
        let tokens = try await f.clock.runToCompletion { [provider = f.provider, vehicle] in
            try await withThrowingTaskGroup(of: AuthToken.self) { group in
                for _ in 0..<10 { group.addTask { try await provider.refresh(for: vehicle) } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1.value) }
            }
        }.get()
        #expect(tokens.count == 1)
        #expect(f.backend.mintedCount == 2)
    }

    @Test func aFailedRefreshThrowsAndKeepsTheCachedToken() async throws {
        let f = try DriverFixture()
        let first = try await f.provider.token(for: vehicle)
        f.transport.setFaultInjector { _, _ in .status(403) }
        await #expect(throws: FleetAuthError.self) { try await f.provider.refresh(for: vehicle) }
        #expect(f.provider.cachedUsableToken(for: vehicle) == first)
    }

    /// The backend is down with a token held: lookups keep being served the held token, and a
    /// refresh, which asked for a new one, throws once the retry policy's budget is spent.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aRefreshThatCannotFetchThrowsInsteadOfReturningTheHeldToken() async throws {
        let f = try DriverFixture()
        let held = try await f.provider.token(for: vehicle)
        f.transport.setFaultInjector { _, _ in .status(503) }
        let requestsBefore = f.transport.requestCount
        let refreshed = await f.clock.runToCompletion(horizon: 120) { [provider = f.provider, vehicle] in
            try await provider.refresh(for: vehicle)
        }
        #expect(throws: FleetAuthError.self) { try refreshed.get() }
        #expect(f.transport.requestCount > requestsBefore + 1)
        #expect(try await f.provider.token(for: vehicle) == held)
    }
}
