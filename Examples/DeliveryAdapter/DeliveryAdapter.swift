// DeliveryAdapter: the platform's delivery driver sample ported to FleetAuth. Its backend route
// `GET /token/delivery_driver/{vehicleId}` answers `{"token", "creation_timestamp_ms",
// "expiration_timestamp_ms"}`; the provider reads it with a preset, refuses on-demand tokens by
// the delivery fleet rule, and serves the vehicle's token to its task contexts. The SDK asks
// through `FleetAuthAuthorization` (`DeliveryTokenAdapter.swift`), against a stand-in of the
// SDK's protocol (the `PlatformSDK` module).
//
//   swift run --package-path Examples DeliveryAdapter   # embedded in-memory token backend
//   swift run --package-path Examples DeliveryAdapter \
//       --token-url 'https://api.example.com/token/delivery_driver/{vehicleId}' --vehicle-id dv-9
import ExampleSupport
import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthURLSession
import Foundation
import PlatformSDK

@main
struct DeliveryAdapterExample {
    static let usage = """
        usage: DeliveryAdapter [--vehicle-id ID] [--tasks N]
                               [--token-url URL [--format PRESET] [--header 'Name: value']... [--timeout SECONDS]
                               [--audience AUD|none]]
        Asks for a delivery vehicle's token, then for N of its tasks (default 100) in a row, as the
        delivery driver SDK does. Without --token-url the token backend is embedded, in memory.
        PRESET: \(CommandLineOptions.formatNames) (default expiration-timestamp-ms, the sample's)
        Exit status: 0 every request kept the contract within the sample's token requests,
        1 any did not, 2 usage error.
        """

    /// What the stand-in SDK saw.
    struct Report: CustomStringConvertible {
        let vehicleID: String
        let tasks: Int
        /// Requests answered with a token, completed once and never inside the call.
        let served: Int
        /// Requests that broke the platform's contract, with how.
        let broken: [String]
        /// Requests answered with an error, with the error.
        let failed: [String]
        /// Whether the request without a vehicle ID got an error, as it should.
        let refusedMissingVehicle: Bool
        /// Token requests the provider sent to the backend.
        let tokenRequests: Int

        var passed: Bool { broken.isEmpty && failed.isEmpty && refusedMissingVehicle && tokenRequests <= 2 }

        var description: String {
            var lines = [
                "DeliveryAdapter report (delivery vehicle \(vehicleID) and \(tasks) of its tasks, asked in a row)",
                "  requests served            \(served) of \(tasks + 1) (the vehicle, then each task)",
                "  token requests             \(tokenRequests) (the sample's provider: 1 per vehicle)",
                "  missing vehicle ID         \(refusedMissingVehicle ? "answered with an error" : "NOT REFUSED")",
            ]
            lines += broken.map { "  BROKE THE CONTRACT         \($0)" }
            lines += failed.map { "  failed                     \($0)" }
            lines.append("summary: \(passed ? "ok" : "FAILED")")
            return lines.joined(separator: "\n")
        }
    }

    /// Asks through the adapter over `provider` as the delivery SDK does.
    static func run(provider: DriverTokenProvider, vehicleID: String, tasks: Int) async -> Report {
        let sdk = PlatformDriverSDK(authorization: FleetAuthAuthorization(provider: provider))
        let asks =
            [PlatformAuthorizationContext(vehicleID: vehicleID)]
            + (1...max(tasks, 1)).prefix(tasks).map {
                PlatformAuthorizationContext(vehicleID: vehicleID, taskID: "task-\($0)")
            }
        var served = 0
        var broken: [String] = []
        var failed: [String] = []
        for context in asks {
            let answer = await sdk.requestToken(for: context, patience: 0.002)
            let label = context.taskID.map { "task \($0)" } ?? "vehicle \(vehicleID)"
            if answer.completions != 1 || answer.calledSynchronously {
                broken.append(
                    "\(label): \(answer.completions) completions, inside the call: \(answer.calledSynchronously)")
            }
            if answer.token != nil { served += 1 } else { failed.append("\(label): \(answer.error ?? "no token")") }
        }
        let missing = await sdk.requestToken(for: PlatformAuthorizationContext(vehicleID: nil))
        return Report(
            vehicleID: vehicleID, tasks: tasks, served: served, broken: broken, failed: failed,
            refusedMissingVehicle: missing.completions == 1 && missing.token == nil && missing.error != nil,
            tokenRequests: provider.statistics.fetches)
    }

    /// A provider on an in-memory backend of the delivery sample's shape: the embedded default.
    static func embeddedProvider() throws -> DriverTokenProvider {
        let transport = InMemoryTransport()
        transport.mount(
            InMemoryTokenBackend(
                configuration: .init(format: .tokenWithExpirationTimestampMilliseconds, fleet: .delivery)),
            at: "/token/delivery_driver/{vehicleId}")
        return try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: "https://backend.example.com/token/delivery_driver/{vehicleId}",
                format: .tokenWithExpirationTimestampMilliseconds),
            transport: transport, rules: TokenRules(fleet: .delivery))
    }

    static func main() async {
        await ExampleCommand.runAndExit(name: "DeliveryAdapter") {
            let arguments = try CommandLineOptions(
                Array(CommandLine.arguments.dropFirst()),
                valueNames: ["token-url", "format", "header", "timeout", "vehicle-id", "tasks", "audience"])
            if arguments.flag("help") {
                print(usage)
                return 0
            }
            let vehicleID = arguments.value("vehicle-id") ?? "dv-9"
            let tasks = Int(try arguments.number("tasks") ?? 100)
            let provider: DriverTokenProvider
            if let tokenURL = arguments.value("token-url") {
                let endpoint = try arguments.endpoint(
                    url: tokenURL, defaultFormat: .tokenWithExpirationTimestampMilliseconds)
                provider = try DriverTokenProvider(
                    endpoint: endpoint, transport: URLSessionTransport(), rules: arguments.rules(fleet: .delivery))
            } else if let stray = arguments.givenNames.subtracting(["help", "vehicle-id", "tasks"]).sorted().first {
                throw CommandLineOptions.UsageError(message: "--\(stray) applies only with --token-url")
            } else {
                provider = try embeddedProvider()
            }
            let report = await run(provider: provider, vehicleID: vehicleID, tasks: tasks)
            print(report)
            return report.passed ? 0 : 1
        }
    }
}
