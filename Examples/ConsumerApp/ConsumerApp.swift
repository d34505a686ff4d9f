// ConsumerApp: a rider app following several trips at once, each with its own token.
//
//   swift run --package-path Examples ConsumerApp   # embedded: in-memory backend and fleet service,
//                                                   # one simulated hour in a second or two
//   swift run --package-path Examples ConsumerApp --token-url 'https://api.example.com/token/consumer/{tripId}' \
//       --fleet-url https://fleet.example.com --provider-id my-project --trip-ids t-1,t-2
//
// Copy `TripSimulation.swift` for the wiring (it reads top to bottom on FleetAuth alone);
// this file reads the command line and, with --token-url, talks to real services.
import ExampleSupport
import FleetAuthConsumer
import FleetAuthURLSession
import Foundation

@main
struct ConsumerApp {
    static let usage = """
        usage: ConsumerApp [--hours H] [--tracking-ids ID,ID,...]
               ConsumerApp --token-url URL --fleet-url URL --provider-id ID
                           (--trip-ids ID,ID,... | --tracking-ids ID,ID,...)
                           [--format PRESET] [--header 'Name: value']... [--timeout SECONDS] [--audience AUD|none]
                           [--rounds N] [--interval SECONDS] [--log-level debug|info|warning|error]
        The token URL may name the ID in its path: https://api.example.com/token/consumer/{tripId},
        or for shipments .../token/delivery_consumer/{trackingId}
        PRESET: \(CommandLineOptions.formatNames)
        Defaults with --token-url: --rounds 5, --interval 10 (a trip's 5 rounds take 40 s), --format
        token-only (the platform's consumer sample backend answers jwt-expiration-timestamp), --timeout 15.
        Token events go to standard error, one line each (never a token's value).
        Exit status: 0 every trip fetch succeeded, 1 any failed, 2 usage error.
        """

    static let valueNames: Set<String> = [
        "hours", "token-url", "fleet-url", "provider-id", "trip-ids", "format", "header", "timeout", "audience",
        "rounds",
        "interval", "tracking-ids", "log-level",
    ]

    /// The comma-separated IDs of `--name`.
    static func ids(_ arguments: CommandLineOptions, _ name: String) -> [String] {
        arguments.value(name)?.split(separator: ",").map(String.init) ?? []
    }

    static func main() async {
        await ExampleCommand.main(
            name: "ConsumerApp", usage: usage, valueNames: valueNames, embeddedNames: ["hours", "tracking-ids"],
            real: runAgainstRealServices
        ) { arguments, progress in
            var options = TripSimulation.Options()
            if let hours = try arguments.number("hours") { options.hours = hours }
            options.trackingIDs = ids(arguments, "tracking-ids")
            options.progress = progress
            return try await TripSimulation.run(options)
        }
    }

    /// Follows `--trip-ids` on a real fleet service for `--rounds` rounds (default 5),
    /// every `--interval` seconds (default 10); returns whether every fetch succeeded.
    static func runAgainstRealServices(tokenURL: String, _ arguments: CommandLineOptions) async throws -> Bool {
        let tripIDs = ids(arguments, "trip-ids")
        let trackingIDs = ids(arguments, "tracking-ids")
        guard let fleetURL = arguments.value("fleet-url").flatMap(URL.init(string:)),
            let providerID = arguments.value("provider-id"), !(tripIDs.isEmpty && trackingIDs.isEmpty)
        else {
            throw CommandLineOptions.UsageError(
                message: "--token-url needs --fleet-url, --provider-id and --trip-ids or --tracking-ids")
        }
        let rounds = Int(try arguments.number("rounds") ?? 5)
        let interval = try arguments.number("interval") ?? 10
        let provider = try ConsumerTokenProvider(
            endpoint: try arguments.endpoint(url: tokenURL),
            transport: URLSessionTransport(), rules: arguments.rules(),
            observer: TokenEventLogger(minimumLevel: try arguments.logLevel()).log)
        let monitor = try TripMonitor(
            fleetService: FleetServiceEndpoint(baseURL: fleetURL, providerID: providerID), authorization: provider,
            transport: URLSessionTransport())
        var succeeded = 0
        var total = 0
        for await update in monitor.updates(for: tripIDs, trackingIDs: trackingIDs, every: interval, rounds: rounds) {
            total += 1
            switch update.result {
            case .success(let trip):
                succeeded += 1
                print("\(update.scope): \(trip.status ?? "?"), vehicle \(trip.vehicleID ?? "none")")
            case .failure(let error):
                print("\(update.scope): \(error)")
            }
        }
        print("summary: \(succeeded) of \(total) fetches succeeded, \(total - succeeded) failed")
        return succeeded == total && total > 0
    }
}
