import FleetAuthCore
import FleetAuthDriver
import FleetAuthTestSupport
import FleetAuthURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a fleet simulator needs from the default transport: one process sends for thousands
/// of vehicles, so its calls must not queue behind a phone's six connections, and a token
/// request must not wait behind the fleet calls that need its token.
@Suite("The default transport under a simulator's load", .timeLimit(.minutes(10)))
struct SimulatorLoadTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    @Test func theDefaultSessionsOpenEnoughConnectionsForASimulator() throws {
        let transport = URLSessionTransport()
        let url = URL(string: server.url("/token/token-only"))!
        var token = TransportRequest(url: url)
        token.asksForToken = true
        #expect(transport.connectionLimit(for: TransportRequest(url: url)) == URLSessionTransport.connectionsPerHost)
        #expect(transport.connectionLimit(for: token) == URLSessionTransport.connectionsPerHost)
        #expect(URLSessionTransport.connectionsPerHost >= 64)
    }

    /// Over cleartext HTTP, a provider over the transport lets as many fetches make their first
    /// attempt at once as the token session opens connections, at least 64: the rest of a fleet
    /// started together waits its turn as a record, not as tasks and a request queued in the
    /// session. Over TLS, where HTTP/2 carries many requests on a connection, the provider's own
    /// limit stands.
    @Test func aProviderSendsAsManyTokenRequestsAtOnceAsTheTokenSessionOpensConnections() throws {
        let loopback = TokenEndpoint(url: server.url("/token/token-only"), format: .tokenOnly)
        let overTLS = TokenEndpoint(url: "https://backend.example.com/token/{vehicleId}", format: .tokenOnly)
        func limit(_ transport: URLSessionTransport, _ endpoint: TokenEndpoint) -> Int {
            TokenProviderConfiguration(endpoint: endpoint, transport: transport).concurrentFetchLimit
        }
        func appSession(connections: Int) -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = connections
            return URLSession(configuration: configuration)
        }
        #expect(limit(URLSessionTransport(), loopback) == URLSessionTransport.connectionsPerHost)
        #expect(limit(URLSessionTransport(session: appSession(connections: 128)), loopback) == 128)
        // A phone's few connections do not hold a simulator's first tokens to a few at a time.
        #expect(
            limit(URLSessionTransport(session: appSession(connections: 6)), loopback)
                == URLSessionTransport.connectionsPerHost)
        #expect(limit(URLSessionTransport(), overTLS) == TokenProviderConfiguration.defaultConcurrentFetchLimit)
        #expect(URLSessionTransport.connectionsPerHost < TokenProviderConfiguration.defaultConcurrentFetchLimit)
    }

    /// Every connection the transport may open to the host is held by a call that does not
    /// answer (as when the fleet service falls behind); a token request to the same host is
    /// still answered within its 5-second timeout. Through one session it would queue
    /// behind the held calls until they end (30 s) and time out.
    @Test func aTokenRequestDoesNotQueueBehindHeldFleetCalls() async throws {
        let transport = URLSessionTransport()
        let held = (0..<URLSessionTransport.connectionsPerHost).map { _ in
            Task {
                _ = try? await transport.send(
                    TransportRequest(method: "PUT", url: URL(string: server.url("/conformance/hang"))!, timeout: 60))
            }
        }
        defer { held.forEach { $0.cancel() } }
        while await Self.taskCount(of: transport.session) < held.count { await Task.yield() }

        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: server.url("/token/expires-in-seconds"), format: .tokenWithExpiresInSeconds, timeout: 5),
            transport: transport, retry: .none)
        let token = try await provider.token(
            for: DriverAuthorizationContext(vehicleID: "v-held-\(UUID().uuidString.prefix(6))"))
        #expect(token.fingerprint.hasPrefix("tok_"))
    }

    private static func taskCount(of session: URLSession) async -> Int {
        await withCheckedContinuation { continuation in
            session.getAllTasks { continuation.resume(returning: $0.count) }
        }
    }
}
