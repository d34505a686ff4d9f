import FleetAuthConsumer
import FleetAuthInMemory
import Foundation

/// The embedded default: a rider follows three trips at once for a simulated hour, each
/// trip refreshed every 10 seconds with its own token. The token backend and the fleet
/// service are in memory and run on a manual clock.
enum TripSimulation {
    struct Options {
        var hours: Double = 1
        var pollInterval: TimeInterval = 10
        var trips: [(id: String, minutes: Double)] = [("trip-airport", 50), ("trip-office", 35), ("trip-station", 20)]
        /// Shipments of a delivery fleet followed beside the trips, by tracking ID.
        var trackingIDs: [String] = []
        var progress: (@Sendable (String) -> Void)?
    }

    struct Report: CustomStringConvertible {
        var simulatedSeconds: TimeInterval = 0
        var snapshots: [String: Int] = [:]
        var finalStatus: [String: String] = [:]
        var errors = 0
        var tokenFetches = 0
        var tokensPerTrip: [String: Int] = [:]
        var callsRejectedByFleet = 0
        var realSeconds: TimeInterval = 0
        var trackingIDs: [String] = []

        var description: String {
            var lines = [
                "ConsumerApp report (embedded in-memory backend and fleet service)",
                "  simulated time          \(String(format: "%.1f", simulatedSeconds / 3600)) h in \(String(format: "%.2f", realSeconds)) s of real time",
            ]
            for trip in snapshots.keys.sorted() {
                lines.append(
                    "  \(trip.padding(toLength: 22, withPad: " ", startingAt: 0))  \(snapshots[trip]!) snapshots, last status \(finalStatus[trip] ?? "none"), \(tokensPerTrip[trip] ?? 0) tokens"
                )
            }
            if !trackingIDs.isEmpty {
                lines.append("  (tracked shipments: \(trackingIDs.sorted().joined(separator: ", ")))")
            }
            lines.append("  errors                  \(errors)")
            lines.append("  token fetches           \(tokenFetches) (each trip has its own token)")
            lines.append("  fleet rejections        \(callsRejectedByFleet)")
            return lines.joined(separator: "\n")
        }
    }

    static func run(_ options: Options) async throws -> Report {
        let started = Date()
        // 1. The embedded services on one manual clock.
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let backend = InMemoryTokenBackend(clock: clock)
        let fleet = InMemoryFleetService(clock: clock)
        transport.mount(backend, at: "/trip-token")
        transport.mount(fleet)
        for trip in options.trips {
            fleet.addTrip(trip.id, vehicleID: "vehicle-for-\(trip.id)", duration: trip.minutes * 60)
        }

        // 2. The app's wiring: one provider for all trips, one monitor.
        let provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/trip-token"), transport: transport, clock: clock)
        let monitor = try TripMonitor(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
            authorization: provider, transport: transport, clock: clock)

        // 3. Follow every trip; after each round, move the clock to the next one.
        let rounds = Int(options.hours * 3600 / options.pollInterval)
        let tripIDs = options.trips.map(\.id)
        let followed = tripIDs.count + Set(options.trackingIDs).count
        var report = Report(trackingIDs: options.trackingIDs)
        var inRound = 0
        var round = 0
        for await update in monitor.updates(
            for: tripIDs, trackingIDs: options.trackingIDs, every: options.pollInterval, rounds: rounds)
        {
            switch update.result {
            case .success(let trip):
                report.snapshots[trip.tripID, default: 0] += 1
                report.finalStatus[trip.tripID] = trip.status
            case .failure:
                report.errors += 1
            }
            inRound += 1
            guard inRound == followed else { continue }
            inRound = 0
            round += 1
            if round % 60 == 0 { options.progress?("  following… round \(round) of \(rounds)") }
            if round < rounds {
                // Every trip is now sleeping until its next refresh; request timeouts are further out.
                await clock.waitForSleepers(count: followed, within: options.pollInterval)
                clock.advance(by: options.pollInterval)
            }
        }
        report.simulatedSeconds = Double(rounds) * options.pollInterval
        report.tokenFetches = backend.mintedCount
        // Which tokens each trip's calls carried, told apart by fingerprint.
        let callsByTrip = Dictionary(grouping: fleet.calls, by: { $0.scope?.id ?? "" })
        report.tokensPerTrip = callsByTrip.mapValues { Set($0.compactMap(\.tokenFingerprint)).count }
        report.callsRejectedByFleet = fleet.rejectedCount
        report.realSeconds = Date().timeIntervalSince(started)
        return report
    }
}
