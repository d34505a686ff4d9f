// ConsumerApp: a rider app following several trips at once, each with its own token.
//
//   swift run ConsumerApp                   # embedded: in-memory backend and fleet service,
//                                           # one simulated hour in a second or two
//   swift run ConsumerApp --token-url https://api.example.com/trip-token \
//       --fleet-url https://fleet.example.com --provider-id my-project --trip-ids t-1,t-2
//
// Copy `TripSimulation.swift` for the wiring; this file only reads the command line.
import ExampleSupport
import FleetAuthConsumer
import FleetAuthURLSession
import Foundation

@main
struct ConsumerApp {
    static let usage = """
        usage: ConsumerApp [--hours H]
               ConsumerApp --token-url URL --fleet-url URL --provider-id ID --trip-ids ID,ID,...
                           [--format PRESET] [--rounds N] [--interval SECONDS]
        PRESET: \(CommandLineOptions.formatNames)
        """

    static func main() async {
        await ExampleCommand.main(name: "ConsumerApp", usage: usage, real: runAgainstRealServices) {
            arguments, progress in
            var options = TripSimulation.Options()
            if let hours = arguments.value("hours").flatMap(Double.init) { options.hours = hours }
            options.progress = progress
            return try await TripSimulation.run(options)
        }
    }

    /// Follows `--trip-ids` on a real fleet service for `--rounds` rounds (default 5),
    /// every `--interval` seconds (default 10).
    static func runAgainstRealServices(tokenURL: String, _ arguments: CommandLineOptions) async throws {
        guard let fleetURL = arguments.value("fleet-url").flatMap(URL.init(string:)),
            let providerID = arguments.value("provider-id"),
            let tripIDs = arguments.value("trip-ids")?.split(separator: ",").map(String.init), !tripIDs.isEmpty
        else {
            throw CommandLineOptions.UsageError(
                message: "--token-url needs --fleet-url, --provider-id and --trip-ids", usage: usage)
        }
        let format = try arguments.value("format").map(CommandLineOptions.format(named:)) ?? .tokenOnly
        let provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: tokenURL, format: format), transport: URLSessionTransport())
        let monitor = TripMonitor(
            fleetService: FleetServiceEndpoint(baseURL: fleetURL, providerID: providerID), authorization: provider,
            transport: URLSessionTransport())
        let rounds = arguments.value("rounds").flatMap(Int.init) ?? 5
        let interval = arguments.value("interval").flatMap(Double.init) ?? 10
        for await update in monitor.updates(for: tripIDs, every: interval, rounds: rounds) {
            switch update.result {
            case .success(let trip):
                print("\(trip.tripID): \(trip.status ?? "?"), vehicle \(trip.vehicleID ?? "none")")
            case .failure(let error):
                print("\(update.tripID): \(error)")
            }
        }
    }
}
