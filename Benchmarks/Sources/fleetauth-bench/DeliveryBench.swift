import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// Delivery vehicles that work their tasks: the delivery driver SDK asks with the vehicle for
/// location updates and with a task ID for task calls, on the delivery sample's route
/// (`/token/delivery_driver/{vehicleId}`), which names the vehicle and not the task.
enum DeliveryBench {
    struct Result {
        var vehicles = 0
        var tasksPerVehicleDay = 0
        /// Token requests for one vehicle and 100 of its task contexts looked up in a row.
        var requestsForAVehicleAndAHundredTasks = 0
        /// Token requests per vehicle over a simulated day of updates and task calls.
        var requestsPerVehicleDay = 0.0
    }

    /// `vehicles` delivery vehicles for a simulated day: every 5 s each looks up its vehicle
    /// and its current task, and it moves to its next task `tasks` times a day.
    static func run(vehicles: Int, tasks: Int = 100) async throws -> Result {
        var result = Result()
        result.vehicles = vehicles
        result.tasksPerVehicleDay = tasks

        do {
            let (provider, backend, _) = try makeProvider()
            _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "dv-0"))
            for task in 0..<100 {
                _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "dv-0", taskID: "task-\(task)"))
            }
            result.requestsForAVehicleAndAHundredTasks = backend.mintedCount
        }

        let (provider, backend, clock) = try makeProvider(latency: 0.2)
        let driver = LatencyDriver(clock: clock)
        let interval = 5.0
        let steps = Int(24 * 3600 / interval)
        let start = clock.now()
        for step in 0..<steps {
            clock.advance(to: start.addingTimeInterval(Double(step) * interval))
            let task = step * tasks / steps
            for vehicle in 0..<vehicles {
                _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "dv-\(vehicle)"))
                _ = try await provider.token(
                    for: DriverAuthorizationContext(vehicleID: "dv-\(vehicle)", taskID: "task-\(task)"))
            }
            await provider.waitUntilIdle()
        }
        driver.stop()
        result.requestsPerVehicleDay = Double(backend.mintedCount) / Double(vehicles)
        return result
    }

    private static func makeProvider(latency: TimeInterval = 0) throws -> (
        DriverTokenProvider, InMemoryTokenBackend, ManualWallClock
    ) {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: latency)
        let backend = InMemoryTokenBackend(
            clock: clock, configuration: .init(format: .tokenWithExpirationTimestampMilliseconds, fleet: .delivery))
        transport.mount(backend, at: "/token/delivery_driver/{vehicleId}")
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: "https://backend.example.com/token/delivery_driver/{vehicleId}",
                format: .tokenWithExpirationTimestampMilliseconds),
            transport: transport, clock: clock, rules: TokenRules(fleet: .delivery))
        return (provider, backend, clock)
    }
}
