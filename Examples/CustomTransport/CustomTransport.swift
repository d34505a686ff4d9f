// CustomTransport: extending FleetAuth with a transport of your own.
//
//   swift run CustomTransport
//
// `AppHeaderTransport` wraps any other transport: it adds the app's version header to
// every request and logs each request and response without secrets (no header values,
// no bodies, no query strings). It is plugged into a driver token provider, then checked
// with the transport conformance suite that every custom transport should pass.
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// Adds `X-App-Version` to every request and logs redacted request lines.
struct AppHeaderTransport: HTTPTransport {
    let base: any HTTPTransport
    let appVersion: String
    let log: @Sendable (String) -> Void

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        var request = request
        request.headers["X-App-Version"] = appVersion
        // `TransportRequest.description` shows method, host, path and header *names* only.
        log("→ \(request)")
        do {
            let response = try await base.send(request)
            log("← \(response) for \(request.method) \(request.url.path)")  // status and size only
            return response
        } catch {
            log("✗ \(type(of: error)) for \(request.method) \(request.url.path)")
            throw error
        }
    }
}

@main
struct CustomTransportExample {
    static func main() async {
        do {
            let result = try await run(log: { print("  \($0)") })
            print("token for vehicle-7: \(result.token)")
            print(
                result.conformanceFailures.isEmpty
                    ? "conformance suite: all \(TransportConformanceSuite.checkNames.count) checks passed"
                    : "conformance suite failures: \(result.conformanceFailures)")
            if !result.conformanceFailures.isEmpty { exit(1) }
        } catch {
            print("CustomTransport: \(error)")
            exit(1)
        }
    }

    struct Result {
        /// The fetched token, redacted (its description shows only a fingerprint).
        let token: AuthToken
        /// What the conformance suite found wrong; empty when the transport conforms.
        let conformanceFailures: [TransportConformanceSuite.Failure]
    }

    static func run(log: @escaping @Sendable (String) -> Void) async throws -> Result {
        // An in-memory backend stands in for your server; use `URLSessionTransport()` as the
        // base in an app.
        let base = InMemoryTransport()
        base.mount(InMemoryTokenBackend(), at: "/driver-token")
        base.mountConformanceRoutes()
        let transport = AppHeaderTransport(base: base, appVersion: "3.1.4", log: log)

        // 1. Plug it into a provider like any transport.
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport)
        let token = try await provider.token(for: DriverAuthorizationContext(vehicleID: "vehicle-7"))

        // 2. Check it against the behaviour FleetAuth relies on.
        let failures = await TransportConformanceSuite(
            transport: transport, baseURL: URL(string: "https://conformance.example")!
        ).run()
        return Result(token: token, conformanceFailures: failures)
    }
}
