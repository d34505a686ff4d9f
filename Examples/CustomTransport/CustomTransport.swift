// CustomTransport: extending FleetAuth with a transport of your own.
//
//   swift run --package-path Examples CustomTransport   # takes no options but --help
//
// `AppHeaderTransport` wraps any other transport: it adds the app's version header to
// every request and logs each request and response without secrets (no header values,
// no bodies, no query strings). It is plugged into a driver token provider, then checked
// with the transport conformance suite that every custom transport should pass.
import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTransportTesting
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
    static let usage = """
        usage: CustomTransport
        Fetches a token through AppHeaderTransport (a wrapper adding X-App-Version and logging
        redacted request lines) and runs the transport conformance suite on it.
        Exit status: 0 the transport conforms, 1 it does not or the fetch failed, 2 usage error.
        """

    /// What the command line asks for: this example takes no options but `--help`.
    enum Invocation: Equatable {
        case run
        case help
        case usageError(String)

        init(_ arguments: [String]) {
            switch arguments.first {
            case nil: self = .run
            case "--help" where arguments.count == 1: self = .help
            case let first? where first.hasPrefix("--"): self = .usageError("unknown option \(first)")
            case let first?: self = .usageError("unexpected argument \(first)")
            }
        }
    }

    static func main() async {
        switch Invocation(Array(CommandLine.arguments.dropFirst())) {
        case .run: break
        case .help:
            print(usage)
            exit(0)
        case .usageError(let message):
            FileHandle.standardError.write(
                Data("CustomTransport: \(message)\nRun `CustomTransport --help` for usage.\n".utf8))
            exit(2)
        }
        do {
            let result = try await run(log: { print("  \($0)") })
            print("token for vehicle-7: \(result.token)")
            print(
                result.conformanceFailures.isEmpty
                    ? "conformance suite: all \(TransportConformanceSuite.checkNames.count) checks passed"
                    : "conformance suite failures: \(result.conformanceFailures)")
            if !result.conformanceFailures.isEmpty { exit(1) }
        } catch {
            FileHandle.standardError.write(Data("CustomTransport: \(error)\n".utf8))
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
