// ConsumerPlatformAdapter: FleetAuth's consumer provider handed to the platform consumer SDK
// through the few lines of adapter an app writes (`ConsumerPlatformTokenAdapter.swift`), against
// a stand-in of the SDK's protocol (the `PlatformSDK` module).
//
//   swift run --package-path Examples ConsumerPlatformAdapter   # embedded in-memory token backend
//   swift run --package-path Examples ConsumerPlatformAdapter --token-url 'https://api.example.com/token/consumer/{tripId}' \
//       --format jwt-expiration-timestamp --trip-id t-1
//
// It asks for tokens as the SDK does (a trip, the same trip again, and no context) and checks
// the contract: a token or an error, the completion called exactly once and never inside the
// call.
import ExampleSupport
import FleetAuthConsumer
import FleetAuthInMemory
import FleetAuthURLSession
import PlatformSDK

@main
struct ConsumerPlatformAdapterExample {
    static let usage = """
        usage: ConsumerPlatformAdapter [--trip-id ID] [--token-url URL [--format PRESET] [--header 'Name: value']...
                                       [--timeout SECONDS] [--audience AUD|none]]
        Without --token-url the token backend is embedded, in memory.
        PRESET: \(CommandLineOptions.formatNames)
        Exit status: 0 every request kept the contract, 1 any did not, 2 usage error.
        """

    /// The requests, in order, made through the adapter over `provider`.
    static func run(provider: ConsumerTokenProvider, tripID: String) async -> [PlatformTokenRequest] {
        let sdk = PlatformConsumerSDK(authorization: ConsumerPlatformTokenAdapter(provider: provider))
        let asks: [(String, PlatformTripAuthorizationContext?, Bool)] = [
            ("trip \(tripID)", PlatformTripAuthorizationContext(tripID: tripID), true),
            ("trip \(tripID) again (cached)", PlatformTripAuthorizationContext(tripID: tripID), true),
            ("no context", nil, false),
        ]
        return await PlatformTokenRequest.make(asks) { await sdk.requestToken(for: $0) }
    }

    /// A provider on an in-memory backend: the embedded default.
    static func embeddedProvider() throws -> ConsumerTokenProvider {
        let transport = InMemoryTransport()
        transport.mount(InMemoryTokenBackend(), at: "/consumer-token")
        return try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/consumer-token"), transport: transport)
    }

    static func main() async {
        await ExampleCommand.runAndExit(name: "ConsumerPlatformAdapter") {
            let arguments = try CommandLineOptions(
                Array(CommandLine.arguments.dropFirst()),
                valueNames: ["token-url", "format", "header", "timeout", "trip-id", "audience"])
            if arguments.flag("help") {
                print(usage)
                return 0
            }
            let provider: ConsumerTokenProvider
            let tripID = arguments.value("trip-id") ?? "t-1"
            if let tokenURL = arguments.value("token-url") {
                provider = try ConsumerTokenProvider(
                    endpoint: try arguments.endpoint(url: tokenURL), transport: URLSessionTransport(),
                    rules: arguments.rules())
            } else if let stray = arguments.givenNames.subtracting(["help", "trip-id"]).sorted().first {
                throw CommandLineOptions.UsageError(message: "--\(stray) applies only with --token-url")
            } else {
                provider = try embeddedProvider()
            }
            let requests = await run(provider: provider, tripID: tripID)
            return PlatformTokenRequest.report(requests, contract: "the platform consumer SDK's contract")
        }
    }
}
