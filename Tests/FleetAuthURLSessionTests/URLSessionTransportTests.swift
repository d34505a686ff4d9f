import FleetAuthConsumer
import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTestSupport
import FleetAuthTransportTesting
import FleetAuthURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("URLSession transport against a real loopback HTTP server", .timeLimit(.minutes(10)))
struct URLSessionTransportTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    @Test func conformsToTheTransportSuite() async {
        let suite = TransportConformanceSuite(transport: URLSessionTransport(), baseURL: server.baseURL)
        let failures = await suite.run()
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func injectedSessionWorks() async throws {
        let transport = URLSessionTransport(session: URLSession(configuration: .ephemeral))
        let response = try await transport.send(
            TransportRequest(url: URL(string: server.url("/conformance/status/404"))!))
        #expect(response.status == 404)
        #expect(response.header("X-CONFORMANCE") == "yes")
    }

    @Test func oversizedBodyIsRefused() async throws {
        let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: 1024))
        do {
            _ = try await transport.send(
                TransportRequest(url: URL(string: server.url("/conformance/bytes?count=5000"))!))
            Issue.record("expected responseTooLarge")
        } catch let error as FleetAuthError {
            #expect(error.reason == .responseTooLarge)
        }
    }

    @Test func urlSessionsOwnTimeoutAndCancellationAreTranslated() throws {
        // The engine knows no URLError: the transport speaks in FleetAuth's terms.
        let request = TransportRequest(url: URL(string: server.url("/conformance/hang"))!)
        let timedOut = URLSessionTransport.translate(URLError(.timedOut), for: request)
        #expect((timedOut as? FleetAuthError)?.reason == .timedOut)
        #expect((timedOut as? FleetAuthError)?.url == request.url)
        #expect(URLSessionTransport.translate(URLError(.cancelled), for: request) is CancellationError)
        let refused = URLSessionTransport.translate(URLError(.cannotConnectToHost), for: request)
        #expect((refused as? URLError)?.code == .cannotConnectToHost)
    }

    /// A token request's body streams through the guard: 16 MiB against a 256 KiB cap,
    /// announced (Content-Length) or streamed until closed, is refused while the guard holds at
    /// most the cap and a chunk.
    @Test(arguments: ["/conformance/bytes?count=16777216", "/conformance/stream?count=16777216"])
    func anOversizedTokenAnswerIsRefusedWithoutBeingHeld(path: String) async throws {
        let cap = 256 * 1024
        let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: cap))
        do {
            _ = try await transport.send(.askingForToken(url: URL(string: server.url(path))!))
            Issue.record("a 16 MiB body was accepted")
        } catch let error as FleetAuthError {
            #expect(error.reason == .responseTooLarge)
        }
        #expect(transport.peakBufferedBytes <= 2 * cap, "held \(transport.peakBufferedBytes) bytes")
    }

    /// A fleet call's body comes whole, with no delegate call per chunk: 16 MiB against a
    /// 256 KiB cap is refused once it has arrived, and the caller gets none of it.
    @Test(arguments: ["/conformance/bytes?count=16777216", "/conformance/stream?count=16777216"])
    func anOversizedFleetAnswerIsRefusedWhenItIsWhole(path: String) async throws {
        let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: 256 * 1024))
        let error = try await #require(throws: FleetAuthError.self) {
            _ = try await transport.send(TransportRequest(url: URL(string: server.url(path))!))
        }
        #expect(error.reason == .responseTooLarge)
        #expect(error.message.contains("came whole with 16777216 bytes"), "\(error.message)")
        #expect(error.message.contains("it was dropped"), "\(error.message)")
    }

    @Test func anAnnouncedOversizedTokenAnswerIsRefusedBeforeAnyOfItIsRead() async throws {
        // However fast the server writes, the refusal comes from the Content-Length alone:
        // the transport's buffer never receives a byte of the body.
        let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: 256 * 1024))
        for _ in 0..<3 {
            let url = URL(string: server.url("/conformance/bytes?count=16777216"))!
            let error = try await #require(throws: FleetAuthError.self) {
                _ = try await transport.send(.askingForToken(url: url))
            }
            #expect(error.reason == .responseTooLarge)
            #expect(error.message.contains("announces 16777216 bytes (Content-Length)"), "\(error.message)")
        }
        #expect(transport.peakBufferedBytes == 0, "held \(transport.peakBufferedBytes) bytes")
    }

    @Test func aBodyWithinTheCapStreamsWhole() async throws {
        let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: 256 * 1024))
        let response = try await transport.send(
            TransportRequest(url: URL(string: server.url("/conformance/stream?count=200000"))!))
        #expect(response.status == 200 && response.body.count == 200_000)
    }

    @Test func connectionRefusedIsATransportFailure() async throws {
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "http://127.0.0.1:1/token"), transport: URLSessionTransport(), retry: .none)
        do {
            _ = try await provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-1"))
            Issue.record("expected transportFailure")
        } catch let error as FleetAuthError {
            #expect(error.reason == .transportFailure)
            #expect(error.underlyingError != nil)
        }
    }
}

@Suite("Providers end to end over real HTTP", .timeLimit(.minutes(10)))
struct EndToEndTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    static let shapes: [(String, TokenResponseFormat)] = [
        ("token-only", .tokenOnly),
        ("swift-sample", .swiftSample()),
        ("objc-sample", .objectiveCSample()),
        ("jwt-expiration-timestamp", .jwtWithExpirationTimestamp),
        ("expiration-timestamp-ms", .tokenWithExpirationTimestampMilliseconds),
        ("expires-in-seconds", .tokenWithExpiresInSeconds),
        ("plain", .plainText),
    ]

    func driver(
        _ path: String, format: TokenResponseFormat = .tokenOnly, clock: any WallClock = SystemWallClock(),
        retry: RetryPolicy = .none
    ) throws -> DriverTokenProvider {
        try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url(path), format: format), transport: URLSessionTransport(),
            clock: clock, retry: retry)
    }

    @Test(arguments: shapes)
    func driverGetsASignedTokenInEveryShape(shape: String, format: TokenResponseFormat) async throws {
        let provider = try driver("/token/\(shape)", format: format)
        let context = DriverAuthorizationContext(vehicleID: "v-42")
        let token = try await provider.token(for: context)
        #expect(token.claims.covers(context.scope))
        #expect(token.claims.algorithm == "RS256")
        #expect(token.claims.keyID == "loopback-test-key-2")
        #expect(abs(token.expiresAt.timeIntervalSince(Date()) - 3600) < 120)
        #expect(AuthToken.fingerprint(of: try await provider.fetchToken(with: context)) == token.fingerprint)
    }

    @Test func consumerGetsATripToken() async throws {
        let provider = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/expires-in-seconds"), format: .tokenWithExpiresInSeconds),
            transport: URLSessionTransport())
        let token = try await provider.token(for: ConsumerAuthorizationContext(tripID: "t-7"))
        #expect(token.claims.covers(.trip("t-7")))
        #expect(!token.claims.covers(.trip("t-8")))
    }

    @Test func postRequestsNameTheVehicleInTheBody() async throws {
        let bodyOnly = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/plain"), method: "POST", format: .plainText),
            transport: URLSessionTransport())
        let token = try await bodyOnly.token(for: DriverAuthorizationContext(vehicleID: "v-post"))
        #expect(token.claims.covers(.vehicle("v-post")))
    }

    @Test func transientFailuresAreRetriedOverHTTP() async throws {
        let key = LoopbackServer.uniqueKey()
        let clock = ManualWallClock(now: Date())
        let provider = try driver(
            "/token/token-only?fail=2&key=\(key)", clock: clock, retry: RetryPolicy(jitter: 0))
        let fetch = Task { try await provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-1")) }
        for _ in 0..<2 {
            // The backoff's sleeper comes once the failed answer arrives over HTTP; if it
            // never does, this fails the test at once instead of hanging it.
            try await clock.sleepersFromOffTheClock(count: 1, within: 2)
            clock.advance(to: try #require(clock.nextDeadline))
        }
        _ = try await fetch.value
        #expect(try await server.requestCount(key: key) == 3)
    }

    @Test func refusedCredentialFailsFastWithOneRequest() async throws {
        let key = LoopbackServer.uniqueKey()
        let provider = try driver("/token/token-only?status=401&key=\(key)", retry: RetryPolicy())
        do {
            _ = try await provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-1"))
            Issue.record("expected unexpectedStatus")
        } catch let error as FleetAuthError {
            #expect(error.reason == .unexpectedStatus && error.status == 401)
        }
        #expect(try await server.requestCount(key: key) == 1)
    }

    @Test(arguments: [
        ("/token/token-only?wrongId=1", TokenResponseFormat.tokenOnly, FleetAuthError.Reason.scopeMismatch),
        ("/token/swift-sample?expiryScale=1000", .swiftSample(), .expiryMismatch),
        (
            "/token/expiration-timestamp-ms?expiryScale=0.001", .tokenWithExpirationTimestampMilliseconds,
            .expiryMismatch
        ),
        ("/token/token-only?lifetime=7200", .tokenOnly, .lifetimeTooLong),
        ("/token/token-only?lifetime=5", .tokenOnly, .lifetimeTooShort),
        ("/token/jwt-expiration-timestamp", .tokenOnly, .malformedResponse),
        ("/token/plain", .tokenOnly, .malformedResponse),
        ("/conformance/redirect", .tokenOnly, .redirectRefused),
        ("/nowhere", .tokenOnly, .unexpectedStatus),
    ])
    func badBackendsAreTypedErrorsAndCacheNothing(
        path: String, format: TokenResponseFormat, code: FleetAuthError.Reason
    )
        async throws
    {
        let provider = try driver(path, format: format)
        do {
            _ = try await provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-1"))
            Issue.record("expected \(code)")
        } catch let error as FleetAuthError {
            #expect(error.reason == code, "\(error)")
        }
        #expect(provider.statistics.cachedScopes == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func hangingBackendTimesOutOnTheInjectedClock() async throws {
        let clock = ManualWallClock(now: Date())
        let requests = Counter()
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/conformance/hang"), timeout: 5), transport: URLSessionTransport(),
            clock: clock, retry: .none, observer: { if $0.kind == .fetchStarted { requests.increment() } })
        let start = clock.uptime()
        let fetch = Task { try await provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-1")) }
        // The request waits for the server (off the clock): wait for its 5-s timeout to sleep.
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 5)
        // A minute more, deadline by deadline: a retry the policy forbids would show here
        // (and end, rather than leave `fetch` waiting for ever).
        await clock.run(until: clock.now().addingTimeInterval(60))
        let result = await fetch.result
        #expect(throws: FleetAuthError.self) { try result.get() }
        if case .failure(let error as FleetAuthError) = result { #expect(error.reason == .timedOut, "\(error)") }
        #expect(clock.uptime() - start == 65)
        #expect(requests.value == 1)  // `.none`: one attempt, no retry
    }
}
