import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTestSupport
import FleetAuthURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Attacks from the network on what FleetAuth sends, against the loopback fixture: redirects
/// to its second port (another origin of the same host), bodies that never end or inflate,
/// and a backend that echoes the headers it was sent. Each runs with the transport's own
/// sessions and with an app's session, which gets the same guard.
@Suite("A hostile network, whatever session the app passes", .timeLimit(.minutes(10)))
struct HostileNetworkTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    static let credential = "Bearer operator-credential-5f3a"
    static let apiKey = "api-key-9c1e77"

    /// The transport under test: its own sessions, or an app's plain ephemeral session (the
    /// Fleet simulators article's pattern), which follows redirects by itself.
    static func transport(appSession: Bool, cap: Int = 1 << 20) -> URLSessionTransport {
        let configuration = URLSessionTransport.Configuration(maximumResponseBytes: cap)
        return appSession
            ? URLSessionTransport(session: URLSession(configuration: .ephemeral), configuration: configuration)
            : URLSessionTransport(configuration: configuration)
    }

    func provider(_ path: String, appSession: Bool, observer: (@Sendable (TokenEvent) -> Void)? = nil) throws
        -> DriverTokenProvider
    {
        try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: server.url(path), format: .tokenOnly,
                headers: { _ in ["Authorization": Self.credential, "X-Api-Key": Self.apiKey] }),
            transport: Self.transport(appSession: appSession), retry: RetryPolicy(maximumAttempts: 1),
            observer: observer)
    }

    /// A token request answered with a redirect to another origin is refused before it is
    /// followed: nothing reaches the target, credential or not.
    @Test(arguments: [301, 302, 303, 307, 308], [false, true])
    func aTokenRequestRedirectedElsewhereReachesNothing(status: Int, appSession: Bool) async throws {
        let key = LoopbackServer.uniqueKey()
        let provider = try provider("/conformance/redirect-elsewhere/\(status)/\(key)", appSession: appSession)
        let error = try await #require(throws: FleetAuthError.self) {
            _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "v-42"))
        }
        #expect(error.code == .transportFailure, "\(error)")
        #expect(try await server.requestCount(key: "elsewhere-\(key)") == 0)
    }

    /// A caller for vehicle v-42 whose tokens come from the fixture, over a transport of its
    /// own or of an app session's.
    func vehicleCaller(appSession: Bool) throws -> AuthorizedCaller<DriverAuthorizationContext> {
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/expires-in-seconds"), format: .tokenWithExpiresInSeconds),
            transport: Self.transport(appSession: appSession))
        return AuthorizedCaller(
            context: DriverAuthorizationContext(vehicleID: "v-42"), authorization: provider,
            transport: Self.transport(appSession: appSession))
    }

    /// A fleet call, sent as a `TransportRequest` or as a `URLRequest`, carries the vehicle's
    /// token; a redirect of it reaches nothing either.
    @Test(arguments: [302, 307], [false, true])
    func aFleetCallRedirectedElsewhereReachesNothing(status: Int, appSession: Bool) async throws {
        let caller = try vehicleCaller(appSession: appSession)
        let key = LoopbackServer.uniqueKey()
        let url = try #require(URL(string: server.url("/conformance/redirect-elsewhere/\(status)/\(key)")))
        await #expect(throws: FleetServiceError.self) {
            _ = try await caller.send(TransportRequest(method: "PUT", url: url, body: Data("{}".utf8)))
        }
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.httpBody = Data("{}".utf8)
        await #expect(throws: FleetServiceError.self) { _ = try await caller.send(request) }
        #expect(try await server.requestCount(key: "elsewhere-\(key)") == 0)
    }

    /// A token answer that is a chunked body of 64 MiB (as good as endless against the 64 KiB
    /// cap), or a small gzip body that inflates to 16 MiB, is refused as its decoded bytes pass
    /// the cap, and the
    /// transport's buffer holds at most the cap and one chunk. The body ends, so that its drain
    /// does not hold the fixture from the tests beside it (an endless one made a 503 elsewhere
    /// wait two minutes); the Security article's figures were taken with endless ones.
    @Test(arguments: ["/conformance/chunked-endless?mib=64", "/conformance/gzip?mib=16"], [false, true])
    func anEndlessOrInflatingBodyIsRefusedAtTheCap(path: String, appSession: Bool) async throws {
        let cap = 64 * 1024
        let transport = Self.transport(appSession: appSession, cap: cap)
        let url = try #require(URL(string: server.url(path)))
        let error = try await #require(throws: FleetAuthError.self) {
            _ = try await transport.send(.askingForToken(url: url))
        }
        #expect(error.reason == .responseTooLarge, "\(error)")
        #expect(transport.peakBufferedBytes <= 2 * cap, "held \(transport.peakBufferedBytes) bytes")
    }

    /// A 401 whose body echoes every header sent: no header value reaches the error's
    /// description, its localized description, `dump`, or an event.
    @Test(arguments: [false, true])
    func aBackendEchoingTheHeadersCannotPutThemInAMessage(appSession: Bool) async throws {
        let seen = LockedState<[String]>([])
        let provider = try provider("/conformance/echo-401", appSession: appSession) { event in
            seen.withLock { $0.append(event.description) }
        }
        let error = try await #require(throws: FleetAuthError.self) {
            _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "v-42"))
        }
        #expect(error.status == 401)
        #expect(error.message.contains("error `invalid_token`"), "\(error.message)")
        var dumped = ""
        dump(error, to: &dumped)
        let texts =
            [error.description, error.localizedDescription, String(reflecting: error), dumped] + seen.withLock { $0 }
        for text in texts {
            for secret in ["operator-credential-5f3a", Self.apiKey] { #expect(!text.contains(secret), "\(text)") }
        }
    }

    /// A backend whose certificate the device does not trust is named as such, with the fix,
    /// after one attempt: not "network error", and not retried as if it were an outage. The
    /// message holds no header value sent.
    @Test(arguments: [false, true])
    func anUntrustedCertificateIsNamedWithItsFix(appSession: Bool) async throws {
        let url = try await server.untrustedTLSURL("/token/token-only")
        let attempts = LockedState(0)
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: url, format: .tokenOnly,
                headers: { _ in ["Authorization": Self.credential, "X-Api-Key": Self.apiKey] }),
            transport: Self.transport(appSession: appSession),
            observer: { event in if case .fetchStarted = event.detail { attempts.withLock { $0 += 1 } } })
        let error = try await #require(throws: FleetAuthError.self) {
            _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "v-42"))
        }
        #expect(error.code == .invalidConfiguration)
        #expect(!error.isTransient)
        #expect(error.message.contains("The TLS connection to 127.0.0.1 failed"), "\(error.message)")
        #expect(error.message.contains("Serve a certificate that an authority the device trusts signed"))
        #expect(attempts.withLock { $0 } == 1)
        for secret in ["operator-credential-5f3a", Self.apiKey] { #expect(!error.description.contains(secret)) }
    }

    /// A fleet call to a server whose certificate the device does not trust says what the
    /// token fetch says: the certificate, that a retry will not change it, and the fix; not
    /// "the call can be retried".
    @Test(arguments: [false, true])
    func aFleetCallToAnUntrustedCertificateSaysNoRetryHelps(appSession: Bool) async throws {
        let caller = try vehicleCaller(appSession: appSession)
        let url = URL(string: try await server.untrustedTLSURL("/v1/providers/p/vehicles/v-42"))!
        let error = try await #require(throws: FleetServiceError.self) {
            _ = try await caller.send(TransportRequest(url: url))
        }
        #expect(error.fault == .network)
        #expect(error.message.contains("The TLS connection to 127.0.0.1 failed"), "\(error.message)")
        #expect(error.message.contains("a retry will not change it"), "\(error.message)")
        #expect(!error.message.contains("can be retried"), "\(error.message)")
        #expect((error.underlyingError as? FleetAuthError)?.reason == .insecureEndpoint)
    }
}
