import FleetAuthCore
import FleetAuthDriver
import FleetAuthTestSupport
import FleetAuthURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session an app passes (`URLSessionTransport(session:)`), as apps make them: a delegate
/// on a queue of the app's, a cookie store, a cache, protocol classes, a background
/// configuration. Against the loopback fixture.
@Suite("Inside the app's own session", .timeLimit(.minutes(2)))
struct AppSessionTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    /// An app's session delegate that records each challenge it gets, and whether it got it on
    /// its session's delegate queue, then answers with the default handling.
    final class ChallengeRecorder: NSObject, URLSessionTaskDelegate, Sendable {
        let queue: OperationQueue
        /// For each challenge, whether it came on `queue`.
        let calls = LockedState<[Bool]>([])
        /// What an app that owns its API client holds: the transport, through its client.
        let transport = LockedState<URLSessionTransport?>(nil)
        /// The answer to each challenge in turn (`.useCredential` with a Basic credential);
        /// the default handling once they run out.
        let answers: [URLSession.AuthChallengeDisposition]

        init(queue: OperationQueue, answers: [URLSession.AuthChallengeDisposition] = []) {
            self.queue = queue
            self.answers = answers
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let index = calls.withLock {
                $0.append(OperationQueue.current === queue)
                return $0.count - 1
            }
            let answer = index < answers.count ? answers[index] : .performDefaultHandling
            let credential =
                answer == .useCredential ? URLCredential(user: "app", password: "pa55", persistence: .none) : nil
            completionHandler(answer, credential)
        }
    }

    /// A serial queue of the app's, as Alamofire's root queue or the main queue are.
    static func appQueue() -> OperationQueue {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }

    /// A URL answering 401 with a Basic challenge: an HTTP-auth challenge reaches the delegate.
    func basicChallengeURL() async throws -> URL {
        try #require(
            URL(
                string: try await server.scriptedURL(
                    status: 401, headers: ["WWW-Authenticate": "Basic realm=\"fleet\""]))
        )
    }

    /// The app's delegate answers FleetAuth's challenges on its own session's delegate queue,
    /// as URLSession would call it, never on the transport's queue.
    @Test func theAppDelegateAnswersChallengesOnItsSessionsQueue() async throws {
        let queue = Self.appQueue()
        let delegate = ChallengeRecorder(queue: queue)
        let appSession = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: queue)
        defer { appSession.invalidateAndCancel() }
        let transport = URLSessionTransport(session: appSession)
        let response = try await transport.send(TransportRequest(url: try await basicChallengeURL()))
        #expect(response.status == 401)
        let calls = delegate.calls.withLock { $0 }
        #expect(!calls.isEmpty, "the app's delegate got no challenge")
        #expect(calls.allSatisfy { $0 }, "challenges on the app's queue: \(calls)")
    }

    /// An app delegate that owns the transport (through its API client) does not keep itself
    /// alive through it: the transport holds the app's session and delegate weakly.
    @Test func aTransportOwnedByTheAppDelegateGoesWithIt() throws {
        weak var released: URLSessionTransport?
        do {
            let delegate = ChallengeRecorder(queue: Self.appQueue())
            let appSession = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: delegate.queue)
            let transport = URLSessionTransport(session: appSession)
            delegate.transport.withLock { $0 = transport }
            released = transport
            #expect(transport.session === appSession)
        }
        #expect(released == nil, "the transport outlived the app's session and delegate")
    }

    /// Once the app's session and its delegate are gone, a challenge is cancelled, not left to
    /// the default handling: the trust decision was the delegate's.
    @Test func aChallengeAfterTheAppsDelegateIsGoneFailsClosed() async throws {
        let transport: URLSessionTransport
        do {
            let delegate = ChallengeRecorder(queue: Self.appQueue())
            transport = URLSessionTransport(
                session: URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: delegate.queue))
        }
        let url = try await basicChallengeURL()
        let error = try await #require(throws: FleetAuthError.self, "the 401 came back as if the delegate had answered")
        {
            _ = try await transport.send(TransportRequest(url: url))
        }
        #expect(error.code == .invalidConfiguration && !error.isTransient, "\(error)")
        #expect(error.message.contains("or was gone when it came"), "\(error.message)")
    }

    /// An app delegate that cancels a challenge (a pinning delegate refusing a certificate
    /// does so) is an error that says so and is not retried, not a transient "cancelled".
    @Test func aChallengeTheAppsDelegateCancelsIsNamedNotRetried() async throws {
        let queue = Self.appQueue()
        let delegate = ChallengeRecorder(queue: queue, answers: [.cancelAuthenticationChallenge])
        let appSession = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: queue)
        defer { appSession.invalidateAndCancel() }
        let transport = URLSessionTransport(session: appSession)
        let url = try await basicChallengeURL()
        let error = try await #require(throws: FleetAuthError.self) {
            _ = try await transport.send(TransportRequest(url: url))
        }
        #expect(error.code == .invalidConfiguration && !error.isTransient, "\(error)")
        #expect(
            error.message.contains("HTTP authentication challenge of the request was cancelled"), "\(error.message)")
        #expect(delegate.calls.withLock { $0 } == [true])
    }

    /// A credential the app's delegate gives sends the request again; the answer the caller
    /// gets holds the last answer's body only, not the refusal's before it. (A token request:
    /// its body streams through the guard. A fleet call gets the last answer's status; on
    /// Linux, where the guard answers a challenge nobody meets with its 401 itself, without
    /// its body, which URLSession holds until the task ends.)
    @Test func aCredentialGivenSendsAgainAndTheBodyIsTheLastAnswers() async throws {
        let queue = Self.appQueue()
        let delegate = ChallengeRecorder(
            queue: queue,
            answers: [.useCredential, .performDefaultHandling])
        let appSession = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: queue)
        defer { appSession.invalidateAndCancel() }
        let transport = URLSessionTransport(session: appSession)
        let body = Data(#"{"error":"invalid_token"}"#.utf8)
        let url = try #require(
            URL(
                string: try await server.scriptedURL(
                    status: 401, headers: ["WWW-Authenticate": "Basic realm=\"fleet\""], body: body)))
        let response = try await transport.send(.askingForToken(url: url))
        #expect(response.status == 401)
        #expect(response.body == body, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(delegate.calls.withLock { $0 }.count == 2)
        let fleetCall = try await transport.send(TransportRequest(url: url))
        #expect(fleetCall.status == 401)
    }

    /// A session with a cookie store: a `Set-Cookie` from the token backend is neither stored
    /// in the app's store nor sent with the next request.
    @Test(arguments: [false, true])
    func noCookieIsStoredOrSent(defaultConfiguration: Bool) async throws {
        let configuration: URLSessionConfiguration = defaultConfiguration ? .default : .ephemeral
        let cookieStore = try #require(configuration.httpCookieStorage)
        let appSession = URLSession(configuration: configuration)
        defer { appSession.invalidateAndCancel() }
        let transport = URLSessionTransport(session: appSession)
        let cookieName = "fa_wide_\(UUID().uuidString.prefix(8))"
        let setting = try await server.scriptedURL(
            status: 200, headers: ["Set-Cookie": "\(cookieName)=stolen; Path=/; Max-Age=3600"], body: Data("{}".utf8))
        _ = try await transport.send(TransportRequest(url: try #require(URL(string: setting))))
        let echo = try await transport.send(
            TransportRequest(url: try #require(URL(string: server.url("/conformance/echo")))))
        let echoed = try #require(try JSONSerialization.jsonObject(with: echo.body) as? [String: Any])
        let headers = try #require(echoed["headers"] as? [String: String])
        #expect(headers["cookie"] == nil, "sent: \(headers["cookie"] ?? "")")
        #expect(!(cookieStore.cookies ?? []).contains { $0.name == cookieName }, "stored in the app's cookie store")
    }

    /// The guard declines every answer URLSession offers to cache, whatever the configuration's
    /// `urlCache`: a token answer stays in memory.
    @Test func noAnswerIsCached() async throws {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = cache
        configuration.requestCachePolicy = .useProtocolCachePolicy
        let appSession = URLSession(configuration: configuration)
        defer { appSession.invalidateAndCancel() }
        let transport = URLSessionTransport(session: appSession)
        let url = try #require(
            URL(
                string: try await server.scriptedURL(
                    status: 200, headers: ["Cache-Control": "public, max-age=3600"], body: Data("{\"token\":1}".utf8)))
        )
        let response = try await transport.send(TransportRequest(url: url))
        #expect(response.status == 200)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        // What the guard answers when URLSession offers an answer to store.
        let offered = CachedURLResponse(
            response: try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil)),
            data: Data("{}".utf8))
        let answered = LockedState<[Bool]>([])
        let guardDelegate = try #require(
            transport.session(for: TransportRequest(url: url)).delegate as? any URLSessionDataDelegate)
        let task = appSession.dataTask(with: url)
        let answer: @Sendable (CachedURLResponse?) -> Void = { kept in answered.withLock { $0.append(kept != nil) } }
        #if canImport(FoundationNetworking)
            guardDelegate.urlSession(appSession, dataTask: task, willCacheResponse: offered, completionHandler: answer)
        #else
            guardDelegate.urlSession?(appSession, dataTask: task, willCacheResponse: offered, completionHandler: answer)
        #endif
        #expect(answered.withLock { $0 } == [false])
    }

    /// A configuration with an identifier (a background one) is refused with a message naming
    /// what to pass instead; one without is not.
    @Test func aBackgroundConfigurationIsRefused() throws {
        let refusal = try #require(URLSessionTransport.refusal(ofConfigurationIdentifiedAs: "app.background"))
        #expect(refusal.reason == .invalidConfiguration)
        #expect(refusal.message.contains("URLSessionConfiguration.default or .ephemeral"), "\(refusal.message)")
        #expect(URLSessionTransport.refusal(ofConfigurationIdentifiedAs: nil) == nil)
    }

    #if !canImport(FoundationNetworking)
        /// A background session is refused before anything is sent (FoundationNetworking has no
        /// background configuration).
        @Test func aBackgroundSessionIsRefusedBeforeAnythingIsSent() async throws {
            let key = LoopbackServer.uniqueKey()
            let appSession = URLSession(configuration: .background(withIdentifier: "fleetauth-test-\(key)"))
            defer { appSession.invalidateAndCancel() }
            let transport = URLSessionTransport(session: appSession)
            let url = try #require(URL(string: server.url("/token/token-only?vehicleId=v-42&key=\(key)")))
            let error = try await #require(throws: FleetAuthError.self) {
                _ = try await transport.send(TransportRequest(url: url))
            }
            #expect(error.reason == .invalidConfiguration)
            #expect(error.message.contains("URLSessionConfiguration.default or .ephemeral"), "\(error.message)")
            #expect(try await server.requestCount(key: key) == 0)
        }
    #endif

    /// A protocol class the app registered (a network debugger, a stub library) never sees
    /// FleetAuth's requests: the credential goes to the origin named, over the system's HTTP.
    @Test func theAppsProtocolClassesSeeNothing() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [InterceptingProtocol.self] + (configuration.protocolClasses ?? [])
        let appSession = URLSession(configuration: configuration)
        defer { appSession.invalidateAndCancel() }
        let transport = URLSessionTransport(session: appSession)
        let marker = "credential-\(UUID().uuidString.prefix(8))"
        let response = try await transport.send(
            TransportRequest(
                url: try #require(URL(string: server.url("/conformance/echo"))), headers: ["Authorization": marker]))
        let echoed = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect((echoed["headers"] as? [String: String])?["authorization"] == marker, "the fixture got no request")
        #expect(!InterceptingProtocol.seen.withLock { $0 }.contains(marker))
    }
}

/// A protocol class that takes every request it is offered and answers it itself, as stub
/// libraries do; it records each request's `Authorization`.
final class InterceptingProtocol: URLProtocol {
    static let seen = LockedState<[String]>([])

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        Self.seen.withLock { $0.append(request.value(forHTTPHeaderField: "Authorization") ?? "") }
        let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("{}".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

extension AppSessionTests {
    /// A backend's 401 with an HTTP challenge comes back as the 401 it is when no delegate of
    /// the app's answers it (the transport's own sessions, an app's session without a
    /// delegate): FoundationNetworking would leave the request waiting for good.
    @Test(arguments: [false, true])
    func aChallengeNobodyAnswersComesBackAsItsAnswer(appSession: Bool) async throws {
        let transport =
            appSession ? URLSessionTransport(session: URLSession(configuration: .ephemeral)) : URLSessionTransport()
        let response = try await transport.send(TransportRequest(url: try await basicChallengeURL(), timeout: 10))
        #expect(response.status == 401)
        #expect(response.header("WWW-Authenticate") == "Basic realm=\"fleet\"")
    }
}

extension AppSessionTests {
    /// `dump` of a provider, a reporter or the transport made with an app's session shows no
    /// query value of the token URL, and none of what the app's session holds: its headers'
    /// values, its stored credentials.
    @Test func dumpsShowNoSecretOfTheEndpointOrTheAppsSession() throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Api-Key": "sk-live-header-secret"]
        let appSession = URLSession(configuration: configuration)
        defer { appSession.invalidateAndCancel() }
        let transport = URLSessionTransport(session: appSession)
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/driver/{vehicleId}?apiKey=query-secret")),
            transport: transport)
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(baseURL: server.baseURL, providerID: "loopback-project"),
            vehicleID: "v-42", authorization: provider, transport: transport)
        for subject in [provider as Any, reporter, transport] {
            var dumped = ""
            dump(subject, to: &dumped, maxDepth: 20)
            for secret in ["query-secret", "sk-live-header-secret"] { #expect(!dumped.contains(secret), "\(dumped)") }
        }
    }
}
