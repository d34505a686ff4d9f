package import FleetAuthDriver
package import FleetAuthInMemory
package import Foundation

/// The in-memory world of the Fleet simulators article's loop, as the benchmarks set it up:
/// a manual clock, a transport with the token backend and the fleet service mounted, and
/// one provider for every vehicle.
package struct InMemoryFleet: Sendable {
    /// The clock everything runs on.
    package let clock = ManualWallClock()
    /// The transport every request goes through.
    package let transport: InMemoryTransport
    /// The token backend, at `/token/driver/{vehicleId}`.
    package let backend: InMemoryTokenBackend
    /// The fleet service, for provider `bench-project`.
    package let fleetService: InMemoryFleetService
    /// The provider every vehicle's token comes from.
    package let provider: DriverTokenProvider

    /// A world whose transport answers after `latency` seconds of its clock.
    package init(latency: TimeInterval) throws {
        transport = InMemoryTransport(clock: clock, latency: latency)
        backend = InMemoryTokenBackend(clock: clock, configuration: .init(format: .jwtWithExpirationTimestamp))
        transport.mount(backend, at: "/token/driver/{vehicleId}")
        fleetService = InMemoryFleetService(clock: clock, configuration: .init(providerID: "bench-project"))
        transport.mount(fleetService)
        provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: "https://api.example.com/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp),
            transport: transport, clock: clock)
    }

    /// A reporter for `vehicleID` with the world's provider, sending through `transport`
    /// (by default the world's).
    package func reporter(_ vehicleID: String, transport: (any HTTPTransport)? = nil) throws -> VehicleReporter {
        try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "bench-project"),
            vehicleID: vehicleID, authorization: provider, transport: transport ?? self.transport, clock: clock)
    }
}
