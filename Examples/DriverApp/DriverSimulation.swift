import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// The embedded default: a vehicle drives a loop for a few simulated hours, reporting its
/// location every few seconds. The token backend and the fleet service are in memory and
/// run on a manual clock, so hours pass in seconds and no server is needed.
enum DriverSimulation {
    struct Options {
        var hours: Double = 4
        var updateInterval: TimeInterval = 5
        var tokenLifetime: TimeInterval = 3600
        var networkLatency: TimeInterval = 0.2
        var vehicleID = "vehicle-42"
        /// On-demand (the default) or delivery: the claim key the backend mints and the
        /// call the reporter makes.
        var fleet = FleetFlavor.onDemand
        /// Token events at this level and above go to standard error; `nil` logs none.
        var logLevel: TokenEventLevel?
        var progress: (@Sendable (String) -> Void)?
    }

    struct Report: CustomStringConvertible {
        var fleet = FleetFlavor.onDemand
        var simulatedSeconds: TimeInterval = 0
        var updatesSent = 0
        var updatesAccepted = 0
        var updatesFailed = 0
        var callsRejectedByFleet = 0
        var tokenFetches = 0
        var minimumTokenFetches = 0
        var callersThatWaited = 0
        var realSeconds: TimeInterval = 0

        var description: String {
            """
            DriverApp report (embedded in-memory backend and fleet service, \(fleet == .delivery ? "delivery vehicle: PATCH deliveryVehicles" : "on-demand vehicle: PUT vehicles"))
              simulated time          \(String(format: "%.1f", simulatedSeconds / 3600)) h in \(String(format: "%.2f", realSeconds)) s of real time
              updates sent            \(updatesSent)
              updates accepted        \(updatesAccepted)
              rejected updates        \(updatesFailed) (fleet-service rejections: \(callsRejectedByFleet))
              token fetches           \(tokenFetches) (minimum the lifetime implies: \(minimumTokenFetches))
              callers that waited     \(callersThatWaited) on the network (the rest were served from the cache)
            """
        }
    }

    static func run(_ options: Options) async throws -> Report {
        let started = Date()
        // 1. The embedded services, all on one manual clock with some network latency.
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: options.networkLatency)
        let backend = InMemoryTokenBackend(
            clock: clock,
            configuration: .init(lifetime: options.tokenLifetime, fleet: options.fleet))
        let fleet = InMemoryFleetService(clock: clock)
        transport.mount(backend, at: "/driver-token")
        transport.mount(fleet)

        // 2. The app's wiring: a token provider and a vehicle reporter. In a real app the
        //    transport is `URLSessionTransport()` and the clock is the system clock.
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport,
            clock: clock, rules: TokenRules(fleet: options.fleet),
            observer: options.logLevel.map { TokenEventLogger(minimumLevel: $0).log })
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project", fleet: options.fleet),
            vehicleID: options.vehicleID, authorization: provider, transport: transport, clock: clock)

        // 3. Drive: one update every `updateInterval` seconds of simulated time.
        var report = Report(fleet: options.fleet)
        let start = clock.now()
        let updates = Int(options.hours * 3600 / options.updateInterval)
        for step in 0..<updates {
            // Background token refreshes happen at their own moments on the way.
            await clock.run(until: start.addingTimeInterval(Double(step) * options.updateInterval))
            let location = routePoint(step, interval: options.updateInterval, at: clock.now())
            let outcome = await clock.runToCompletion { try await reporter.report(location) }
            report.updatesSent += 1
            switch outcome {
            case .success: report.updatesAccepted += 1
            case .failure: report.updatesFailed += 1
            }
            if step % 240 == 0 || step == updates - 1 {
                let elapsed = clock.now().timeIntervalSince(start)
                options.progress?(
                    String(
                        format: "  driving… %02d:%02d simulated, %d updates, %d token fetches", Int(elapsed) / 3600,
                        Int(elapsed) / 60 % 60, step + 1, backend.mintedCount))
            }
        }
        report.simulatedSeconds = clock.now().timeIntervalSince(start)
        report.callsRejectedByFleet = fleet.rejectedCount
        report.tokenFetches = backend.mintedCount
        // A token may be used until 5 minutes (a quarter of a shorter life) before it expires.
        let usableLife =
            options.tokenLifetime - min(RefreshPolicy().minimumRemainingLifetime, options.tokenLifetime / 4)
        report.minimumTokenFetches = Int((Double(updates) * options.updateInterval / usableLife).rounded(.up))
        report.callersThatWaited = provider.statistics.waits
        report.realSeconds = Date().timeIntervalSince(started)
        return report
    }

    /// A point on a 1-km circle around central Berlin, at 10 m/s.
    static func routePoint(_ step: Int, interval: TimeInterval, at time: Date) -> VehicleLocation {
        let speed = 10.0
        let radius = 1000.0
        let angle = Double(step) * interval * speed / radius
        let latitude = 52.52 + radius * sin(angle) / 111_320
        let longitude = 13.405 + radius * cos(angle) / (111_320 * cos(52.52 * .pi / 180))
        let heading = (90 - angle * 180 / .pi).truncatingRemainder(dividingBy: 360)
        return VehicleLocation(
            latitude: latitude, longitude: longitude, heading: heading < 0 ? heading + 360 : heading, speed: speed,
            accuracy: 5, timestamp: time)
    }
}
