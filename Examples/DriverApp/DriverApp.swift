// DriverApp: a driver app reporting its vehicle's location with FleetAuth tokens.
//
//   swift run DriverApp                     # embedded: in-memory backend and fleet service,
//                                           # 4 simulated hours in a few seconds
//   swift run DriverApp --token-url https://api.example.com/driver-token \
//       --fleet-url https://fleet.example.com --provider-id my-project --vehicle-id v-42
//
// Copy `DriverSimulation.swift` for the wiring; this file only reads the command line.
import ExampleSupport
import FleetAuthDriver
import FleetAuthURLSession
import Foundation

@main
struct DriverApp {
    static let usage = """
        usage: DriverApp [--hours H]
               DriverApp --token-url URL --fleet-url URL --provider-id ID --vehicle-id ID
                         [--format PRESET] [--updates N] [--interval SECONDS]
        PRESET: \(CommandLineOptions.formatNames)
        """

    static func main() async {
        await ExampleCommand.main(name: "DriverApp", usage: usage, real: runAgainstRealServices) {
            arguments, progress in
            var options = DriverSimulation.Options()
            if let hours = arguments.value("hours").flatMap(Double.init) { options.hours = hours }
            options.progress = progress
            return try await DriverSimulation.run(options)
        }
    }

    /// Sends `--updates` location updates (default 10) every `--interval` seconds
    /// (default 5) to a real fleet service, with tokens from a real backend.
    static func runAgainstRealServices(tokenURL: String, _ arguments: CommandLineOptions) async throws {
        guard let fleetURL = arguments.value("fleet-url").flatMap(URL.init(string:)),
            let providerID = arguments.value("provider-id"), let vehicleID = arguments.value("vehicle-id")
        else {
            throw CommandLineOptions.UsageError(
                message: "--token-url needs --fleet-url, --provider-id and --vehicle-id", usage: usage)
        }
        let format = try arguments.value("format").map(CommandLineOptions.format(named:)) ?? .tokenOnly
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: tokenURL, format: format), transport: URLSessionTransport(),
            observer: { event in print("  token: \(event)") })  // events never carry token values
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(baseURL: fleetURL, providerID: providerID), vehicleID: vehicleID,
            authorization: provider, transport: URLSessionTransport())
        let updates = arguments.value("updates").flatMap(Int.init) ?? 10
        let interval = arguments.value("interval").flatMap(Double.init) ?? 5
        for step in 0..<updates {
            let location = DriverSimulation.routePoint(step, interval: interval, at: Date())
            do {
                let receipt = try await reporter.report(location)
                print("update \(step + 1): HTTP \(receipt.status) with \(receipt.tokenFingerprint)")
            } catch {
                print("update \(step + 1) failed: \(error)")
            }
            if step + 1 < updates { try await SystemWallClock().sleep(for: interval) }
        }
    }
}
