// DriverApp: a driver app reporting its vehicle's location with FleetAuth tokens.
//
//   swift run --package-path Examples DriverApp   # embedded: in-memory backend and fleet service,
//                                                 # 4 simulated hours in a few seconds
//   swift run --package-path Examples DriverApp --token-url 'https://api.example.com/token/driver/{vehicleId}' \
//       --format jwt-expiration-timestamp --header 'Authorization: Bearer <app credential>' \
//       --fleet-url https://fleet.example.com --provider-id my-project --vehicle-id v-42
//
// Copy `DriverSimulation.swift` for the wiring (it reads top to bottom on FleetAuth alone);
// this file reads the command line and, with --token-url, talks to real services.
import ExampleSupport
import FleetAuthDriver
import FleetAuthURLSession
import Foundation

@main
struct DriverApp {
    static let usage = """
        usage: DriverApp [--hours H] [--fleet on-demand|delivery] [--log-level debug|info|warning|error]
               DriverApp --token-url URL --fleet-url URL --provider-id ID --vehicle-id ID
                         [--fleet on-demand|delivery] [--format PRESET] [--header 'Name: value']... [--timeout SECONDS]
                         [--audience AUD|none] [--updates N] [--interval SECONDS]
                         [--log-level debug|info|warning|error]
        The token URL may name the ID in its path: https://api.example.com/token/driver/{vehicleId}
        PRESET: \(CommandLineOptions.formatNames)
        Defaults with --token-url: --updates 10, --interval 5 (10 updates take 45 s), --format token-only
        (the platform's driver sample backend answers jwt-expiration-timestamp), --timeout 15.
        Token events go to standard error, one line each, and token state changes to standard
        output (never a token's value).
        Exit status: 0 every update accepted, 1 any failed, 2 usage error.
        """

    static let valueNames: Set<String> = [
        "hours", "token-url", "fleet-url", "provider-id", "vehicle-id", "format", "header", "timeout", "audience",
        "updates",
        "interval", "fleet", "log-level",
    ]

    /// The `--fleet` flavor (default on-demand).
    static func fleet(_ arguments: CommandLineOptions) throws -> FleetFlavor {
        guard let name = arguments.value("fleet") else { return .onDemand }
        guard let fleet = [FleetFlavor.onDemand, .delivery].first(where: { "\($0)" == name }) else {
            throw CommandLineOptions.UsageError(message: "--fleet takes on-demand or delivery, not \(name)")
        }
        return fleet
    }

    static func main() async {
        await ExampleCommand.main(
            name: "DriverApp", usage: usage, valueNames: valueNames, embeddedNames: ["hours", "fleet", "log-level"],
            real: runAgainstRealServices
        ) { arguments, progress in
            var options = DriverSimulation.Options()
            if let hours = try arguments.number("hours") { options.hours = hours }
            options.fleet = try fleet(arguments)
            if arguments.value("log-level") != nil { options.logLevel = try arguments.logLevel() }
            options.progress = progress
            return try await DriverSimulation.run(options)
        }
    }

    /// Sends `--updates` location updates (default 10) every `--interval` seconds
    /// (default 5) to a real fleet service, with tokens from a real backend; returns
    /// whether every update was accepted.
    static func runAgainstRealServices(tokenURL: String, _ arguments: CommandLineOptions) async throws -> Bool {
        guard let fleetURL = arguments.value("fleet-url").flatMap(URL.init(string:)),
            let providerID = arguments.value("provider-id"), let vehicleID = arguments.value("vehicle-id")
        else {
            throw CommandLineOptions.UsageError(
                message: "--token-url needs --fleet-url, --provider-id and --vehicle-id")
        }
        let updates = Int(try arguments.number("updates") ?? 10)
        let interval = try arguments.number("interval") ?? 5
        let fleet = try fleet(arguments)
        let provider = try DriverTokenProvider(
            endpoint: try arguments.endpoint(url: tokenURL),
            transport: URLSessionTransport(), rules: arguments.rules(fleet: fleet),
            observer: TokenEventLogger(minimumLevel: try arguments.logLevel()).log)
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(baseURL: fleetURL, providerID: providerID, fleet: fleet),
            vehicleID: vehicleID,
            authorization: provider, transport: URLSessionTransport())
        // Token state as it changes, as a status line on screen would show it.
        let watching = Task {
            for await state in provider.tokenStates(for: reporter.context) { print("token state: \(state)") }
        }
        defer { watching.cancel() }
        var accepted = 0
        for step in 0..<updates {
            let location = DriverSimulation.routePoint(step, interval: interval, at: Date())
            do {
                let receipt = try await reporter.report(location)
                accepted += 1
                print("update \(step + 1): HTTP \(receipt.status) with \(receipt.tokenFingerprint)")
            } catch {
                print("update \(step + 1) failed: \(error)")
            }
            if step + 1 < updates { try await Task.sleep(nanoseconds: UInt64(interval * 1e9)) }
        }
        let statistics = provider.statistics
        print(
            "summary: \(accepted) of \(updates) updates accepted, \(updates - accepted) failed; \(statistics.fetches) token \(statistics.fetches == 1 ? "fetch" : "fetches")"
        )
        return accepted == updates
    }
}
