import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

/// A delivery driver provider on a backend of the delivery sample's shape:
/// `GET /token/delivery_driver/{vehicleId}`, snake-case absolute milliseconds.
struct DeliveryFixture {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let backend: InMemoryTokenBackend
    let provider: DriverTokenProvider

    init(
        url: String = "https://backend.example.com/token/delivery_driver/{vehicleId}", mountedAt: String? = nil,
        editPayload: (@Sendable (AuthorizationScope, inout [String: Any]) -> Void)? = nil
    ) throws {
        transport = InMemoryTransport(clock: clock)
        backend = InMemoryTokenBackend(
            clock: clock,
            configuration: .init(
                format: .tokenWithExpirationTimestampMilliseconds, fleet: .delivery, editPayload: editPayload))
        transport.mount(backend, at: mountedAt ?? "/token/delivery_driver/{vehicleId}")
        provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: url, format: .tokenWithExpirationTimestampMilliseconds),
            transport: transport, clock: clock, rules: TokenRules(fleet: .delivery))
    }
}

@Suite("Delivery tasks share their vehicle's token", .timeLimit(.minutes(10)))
struct DeliveryTaskTokenTests {
    let vehicle = DriverAuthorizationContext(vehicleID: "dv-9")
    func task(_ number: Int) -> DriverAuthorizationContext {
        DriverAuthorizationContext(vehicleID: "dv-9", taskID: "task-\(number)")
    }

    @Test func aVehicleAndAHundredOfItsTasksInARowCostOneRequest() async throws {
        let fixture = try DeliveryFixture()
        let vehicleToken = try await fixture.provider.token(for: vehicle)
        for number in 1...100 {
            #expect(try await fixture.provider.token(for: task(number)) == vehicleToken)
            #expect(try await fixture.provider.fetchToken(with: task(number)) == vehicleToken.value)
        }
        #expect(fixture.backend.mintedCount == 1)
        // The task's state is its vehicle's.
        #expect(fixture.provider.tokenState(for: task(7)).phase == .fresh)
    }

    @Test func tasksAskedFirstOnAColdCacheShareOneFetch() async throws {
        let fixture = try DeliveryFixture()
        let provider = fixture.provider
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for number in 1...50 { group.addTask { try await provider.fetchToken(with: task(number)) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(values.count == 1)
        #expect(try await provider.fetchToken(with: vehicle) == values.first)
        #expect(fixture.backend.mintedCount == 1)
    }

    @Test func aTokenNamingTasksServesOnlyThoseTasks() async throws {
        let fixture = try DeliveryFixture(editPayload: { _, payload in
            var authorization = payload["authorization"] as? [String: Any] ?? [:]
            authorization["taskids"] = ["task-1"]
            payload["authorization"] = authorization
        })
        let vehicleToken = try await fixture.provider.token(for: vehicle)
        #expect(try await fixture.provider.token(for: task(1)) == vehicleToken)
        #expect(fixture.backend.mintedCount == 1)
        // Task 2 is not among the vehicle token's tasks: it fetches for itself, and the
        // backend, which cannot tell the task from this route, mints the same claims again.
        await #expect(throws: FleetAuthError.self) { try await fixture.provider.token(for: task(2)) }
        #expect(fixture.backend.mintedCount == 2)
        #expect(try await fixture.provider.token(for: task(1)) == vehicleToken)
    }

    @Test func aRouteThatNamesTheTaskFetchesPerTask() async throws {
        let fixture = try DeliveryFixture(
            url: "https://backend.example.com/token/delivery_driver/{vehicleId}/{taskId}",
            mountedAt: "/token/delivery_driver/{vehicleId}/{taskId}")
        for number in 1...3 {
            let token = try await fixture.provider.token(for: task(number))
            #expect(token.scope == task(number).scope)
        }
        #expect(fixture.backend.mintedCount == 3)
    }

    @Test func aRouteWithTheIDsInTheQueryFetchesPerTask() async throws {
        let fixture = try DeliveryFixture(url: "https://backend.example.com/driver-token", mountedAt: "/driver-token")
        _ = try await fixture.provider.token(for: vehicle)
        _ = try await fixture.provider.token(for: task(1))
        _ = try await fixture.provider.token(for: task(2))
        #expect(fixture.backend.mintedCount == 3)
    }

    @Test func invalidatingTheVehicleTokenFromATaskDropsItForEveryTask() async throws {
        let fixture = try DeliveryFixture()
        let first = try await fixture.provider.token(for: vehicle)
        #expect(try await fixture.provider.token(for: task(1)) == first)
        // The fleet service refused the token on a task call.
        #expect(fixture.provider.invalidate(first, for: task(1)))
        let second = try await fixture.provider.token(for: task(2))
        #expect(second.value != first.value)
        #expect(try await fixture.provider.token(for: vehicle) == second)
        #expect(try await fixture.provider.token(for: task(1)) == second)
        #expect(fixture.backend.mintedCount == 2)
    }
}
