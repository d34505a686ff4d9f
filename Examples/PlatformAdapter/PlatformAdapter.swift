// PlatformAdapter: FleetAuth's provider handed to the platform driver SDK through the few
// lines of adapter an app writes (`PlatformTokenAdapter.swift`), against a stand-in of the
// SDK's protocol (the `PlatformSDK` module).
//
//   swift run --package-path Examples PlatformAdapter   # embedded in-memory token backend
//   swift run --package-path Examples PlatformAdapter --token-url 'https://api.example.com/token/driver/{vehicleId}' \
//       --format jwt-expiration-timestamp --vehicle-id v-42
//
// It asks for tokens as the SDK does (a vehicle, the same vehicle again, a delivery task, and
// a context without a vehicle ID) and checks the contract: a token or an error, the
// completion called exactly once and never inside the call.
import ExampleSupport
import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthURLSession
import Foundation
import PlatformSDK

@main
struct PlatformAdapterExample {
    static let usage = """
        usage: PlatformAdapter [--vehicle-id ID] [--token-url URL [--format PRESET] [--header 'Name: value']... [--timeout SECONDS]]
                               [--audience AUD|none]]
        Without --token-url the token backend is embedded, in memory.
        PRESET: \(CommandLineOptions.formatNames)
        Exit status: 0 every request kept the contract, 1 any did not, 2 usage error.
        """

    /// The requests, in order, made through the adapter over `provider`.
    static func run(provider: DriverTokenProvider, vehicleID: String) async -> [PlatformTokenRequest] {
        let sdk = PlatformDriverSDK(authorization: PlatformTokenAdapter(provider: provider))
        let asks: [(String, PlatformAuthorizationContext?, Bool)] = [
            ("vehicle \(vehicleID)", PlatformAuthorizationContext(vehicleID: vehicleID), true),
            ("vehicle \(vehicleID) again (cached)", PlatformAuthorizationContext(vehicleID: vehicleID), true),
            (
                "vehicle \(vehicleID) task task-1",
                PlatformAuthorizationContext(vehicleID: vehicleID, taskID: "task-1"), true
            ),
            ("no vehicle ID yet", PlatformAuthorizationContext(vehicleID: nil), false),
            ("no context", nil, false),
        ]
        return await PlatformTokenRequest.make(asks) { await sdk.requestToken(for: $0) }
    }

    /// A provider on an in-memory backend: the embedded default.
    static func embeddedProvider() throws -> DriverTokenProvider {
        let transport = InMemoryTransport()
        transport.mount(InMemoryTokenBackend(), at: "/driver-token")
        return try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport)
    }

    static func main() async {
        await ExampleCommand.runAndExit(name: "PlatformAdapter") {
            let arguments = try CommandLineOptions(
                Array(CommandLine.arguments.dropFirst()),
                valueNames: ["token-url", "format", "header", "timeout", "vehicle-id", "audience"])
            if arguments.flag("help") {
                print(usage)
                return 0
            }
            let provider: DriverTokenProvider
            let vehicleID = arguments.value("vehicle-id") ?? "v-42"
            if let tokenURL = arguments.value("token-url") {
                provider = try DriverTokenProvider(
                    endpoint: try arguments.endpoint(url: tokenURL),
                    transport: URLSessionTransport(), rules: arguments.rules())
            } else if let stray = arguments.givenNames.subtracting(["help", "vehicle-id"]).sorted().first {
                throw CommandLineOptions.UsageError(message: "--\(stray) applies only with --token-url")
            } else {
                provider = try embeddedProvider()
            }
            let requests = await run(provider: provider, vehicleID: vehicleID)
            return PlatformTokenRequest.report(requests, contract: "the platform's contract")
        }
    }
}
