public import FleetAuthCore

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// The production ``/FleetAuthCore/HTTPTransport``, over `URLSession` (FoundationNetworking on Linux).
///
/// Every request goes one way, whatever session made the transport: through a session
/// whose delegate refuses every redirect before it is followed (the 3xx answer is returned
/// as is, so neither the app's credential nor a token reaches another URL), and asks for
/// unencoded bodies; a body over ``Configuration/maximumResponseBytes`` fails with
/// `responseTooLarge`. A token request's body is counted as it is decoded, and refused as soon
/// as it announces or reaches that size; a fleet call's body comes whole, with no delegate call
/// per chunk (the cost of a simulator's every update), and is refused once it has arrived. No
/// session it sends through stores or sends cookies, caches answers or keeps credentials, its
/// own or one made from an app's configuration. Cancelling the calling task cancels the data
/// task.
///
/// One transport serves a phone's single vehicle and a simulator's thousands alike: its
/// sessions open up to 64 connections per host (the platform's default is 6 on Linux, which
/// queues a simulator's requests until their timeouts run out while they wait), and token
/// requests go through a session of their own, so that they never wait behind the
/// fleet-service calls that need their tokens. With a session of the app's
/// (``init(session:configuration:)``) every request goes through one session made with that
/// session's configuration, which then decides both. Over cleartext HTTP, a provider over the
/// transport lets as many of its fetches make their first attempt at once as the token
/// requests' session opens connections to the host, and at least 64: the rest of a fleet
/// started together waits its turn in the provider (within its callers' retry deadline),
/// holding no request and no task, its attempt's timeout not yet started.
///
/// ```swift
/// import FleetAuthDriver
/// import FleetAuthURLSession
///
/// let provider = try DriverTokenProvider(
///     endpoint: TokenEndpoint(url: "https://api.example.com/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp),
///     transport: URLSessionTransport()
/// )
/// ```
public final class URLSessionTransport: HTTPTransport {
    /// Options for the transport.
    public struct Configuration: Sendable {
        /// The largest body accepted, in bytes (decoded). Default 1 MiB.
        public var maximumResponseBytes: Int

        /// Creates a configuration.
        public init(maximumResponseBytes: Int = 1 << 20) {
            self.maximumResponseBytes = maximumResponseBytes
        }
    }

    /// A session whose delegate is the guard every request passes.
    private struct GuardedSession {
        let session: URLSession
        let requestGuard: RequestGuard
    }

    /// The app's session given to ``init(session:configuration:)``, else the transport's own
    /// session for everything but token requests.
    ///
    /// The transport holds an app's session that has a delegate weakly (a session holds its
    /// delegate, and an app delegate that owns the transport would otherwise keep all three
    /// alive for good): once the app lets it go, this is the session the transport sends
    /// through.
    public var session: URLSession { appSession?.session ?? requests.session }
    /// The options in force.
    public let configuration: Configuration
    /// The session everything but token requests goes through.
    private let requests: GuardedSession
    /// The session token requests go through: a second one of the transport's own, or the
    /// same one as ``requests`` with an app's session.
    private let tokenRequests: GuardedSession
    /// The app's session, held weakly, when the transport was made with one.
    private let appSession: RequestGuard.AppSessionReference?
    /// Why every request fails before it is sent: the app's session cannot carry FleetAuth's
    /// requests (a background configuration).
    private let refusal: FleetAuthError?

    /// Connections per host each of the transport's own sessions opens: enough for a
    /// simulator's thousands of vehicles on one fleet service, no cost to a phone's one.
    package static let connectionsPerHost = 64

    /// Creates a transport with its own ephemeral sessions that refuse redirects: one for
    /// token requests, one for everything else, each with up to 64 connections per host.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(
            requests: Self.guardedSession(Self.ownConfiguration()), configuration: configuration,
            tokenRequests: Self.guardedSession(Self.ownConfiguration()), appSession: nil, refusal: nil)
    }

    /// Creates a transport over the app's own session: its configuration's TLS settings,
    /// proxies, headers, timeouts and connections per host apply, and its delegate answers
    /// authentication challenges on the session's delegate queue, so certificate pinning keeps
    /// working.
    ///
    /// Requests do not go through the app's session object itself but through one made with
    /// a copy of its configuration, whose delegate refuses redirects and caps bodies, and
    /// which stores and sends nothing of the app's: no cookies, no cache, no stored
    /// credentials, and none of the app's `protocolClasses` (a network debugger or stub
    /// library there would see the credential, and could follow a redirect with it); it does
    /// not wait for connectivity, so a request ends by its own timeout. The app delegate's
    /// other callbacks (metrics, redirects, data) are not called for FleetAuth's requests.
    /// Token requests share that session with every other request: see the Fleet simulators
    /// article of FleetAuthDriver for what a simulator's session should set.
    ///
    /// A session with a background configuration cannot carry FleetAuth's requests (it runs
    /// no data tasks in the app's process, and follows redirects without asking): every
    /// request then fails with `invalidConfiguration`, naming what to pass instead, and
    /// nothing is sent.
    public convenience init(session: URLSession, configuration: Configuration = Configuration()) {
        let appConfiguration = session.configuration
        let reference = RequestGuard.AppSessionReference(session)
        if let refusal = Self.refusal(ofConfigurationIdentifiedAs: appConfiguration.identifier) {
            // No session is made from it: a second session with a background configuration's
            // identifier is undefined on Apple platforms.
            let own = Self.guardedSession(Self.ownConfiguration())
            self.init(
                requests: own, configuration: configuration, tokenRequests: own, appSession: reference,
                refusal: refusal)
            return
        }
        let guarded = Self.guardedSession(
            Self.lockedDown(appConfiguration), answeringChallengesWith: reference)
        self.init(
            requests: guarded, configuration: configuration, tokenRequests: guarded, appSession: reference,
            refusal: nil)
    }

    private init(
        requests: GuardedSession, configuration: Configuration, tokenRequests: GuardedSession,
        appSession: RequestGuard.AppSessionReference?, refusal: FleetAuthError?
    ) {
        self.requests = requests
        self.tokenRequests = tokenRequests
        self.configuration = configuration
        self.appSession = appSession
        self.refusal = refusal
    }

    /// The refusal of an app's session whose configuration has `identifier`: only background
    /// configurations have one.
    package static func refusal(ofConfigurationIdentifiedAs identifier: String?) -> FleetAuthError? {
        guard identifier != nil else { return nil }
        return FleetAuthError(
            reason: .invalidConfiguration,
            message:
                "URLSessionTransport(session:) was given a session with a background configuration, which runs no data tasks in the app's process and follows redirects without asking; nothing was sent. Pass a session made with URLSessionConfiguration.default or .ephemeral, or use URLSessionTransport()."
        )
    }

    /// An ephemeral configuration, locked down, with 64 connections per host.
    private static func ownConfiguration() -> URLSessionConfiguration {
        let sessionConfiguration = lockedDown(.ephemeral)
        sessionConfiguration.httpMaximumConnectionsPerHost = connectionsPerHost
        return sessionConfiguration
    }

    /// A copy of `configuration` that stores and sends nothing beyond what FleetAuth asks:
    /// no cookie store, cache or credential store, the system's protocol handlers only, and
    /// no wait for connectivity (each request ends by its own timeout).
    private static func lockedDown(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        let copy = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        copy.httpCookieStorage = nil
        copy.httpShouldSetCookies = false
        copy.httpCookieAcceptPolicy = .never
        copy.urlCache = nil
        copy.requestCachePolicy = .reloadIgnoringLocalCacheData
        copy.urlCredentialStorage = nil
        copy.protocolClasses = URLSessionConfiguration.ephemeral.protocolClasses
        #if canImport(FoundationNetworking)
            // FoundationNetworking never waits for connectivity (the property is read-only).
        #else
            copy.waitsForConnectivity = false
        #endif
        return copy
    }

    /// A session with `configuration` whose delegate is a new guard, which hands
    /// authentication challenges to `appSession`'s delegate when there is one.
    private static func guardedSession(
        _ configuration: URLSessionConfiguration,
        answeringChallengesWith appSession: RequestGuard.AppSessionReference? = nil
    ) -> GuardedSession {
        let requestGuard = RequestGuard(forwardingChallengesOf: appSession)
        return GuardedSession(
            session: URLSession(configuration: configuration, delegate: requestGuard, delegateQueue: nil),
            requestGuard: requestGuard)
    }

    /// Lets the sessions finish what they run and go. Not `invalidateAndCancel()`: on Linux it
    /// waits for the sessions' work queue, and a deinit may run on a thread of the concurrency
    /// pool, which that wait would hold while a refused body drains (a suite stalled so).
    deinit {
        requests.session.finishTasksAndInvalidate()
        if tokenRequests.session !== requests.session { tokenRequests.session.finishTasksAndInvalidate() }
    }

    /// The most bytes one body has held in this transport's buffers, for tests of the cap.
    package var peakBufferedBytes: Int {
        max(requests.requestGuard.peakBufferedBytes, tokenRequests.requestGuard.peakBufferedBytes)
    }

    /// The session `request` goes through, whose delegate is its guard.
    package func session(for request: TransportRequest) -> URLSession {
        (request.asksForToken ? tokenRequests : requests).session
    }

    /// The maximum connections per host of the session `request` goes through.
    package func connectionLimit(for request: TransportRequest) -> Int {
        session(for: request).configuration.httpMaximumConnectionsPerHost
    }

    /// Sends the request with a data task; throws `CancellationError` if the calling task
    /// is cancelled, `URLError` for network failures (its failing URL without user info or
    /// query), and ``/FleetAuthCore/FleetAuthError`` for timeouts, oversized bodies and
    /// answers from another origin.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        // Everything before and after the one wait is done in functions that are not async:
        // this frame, which every request in flight holds (a simulator's task keeps the
        // largest it ever held), keeps the request, the box and the answer only.
        let box = try dataTask(for: request)
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { box.begin($0) }
        } onCancel: {
            box.cancel()
        }
        return try Self.transportResponse(data: data, response: response, for: request)
    }

    /// The data task that will carry `request`, not yet made: through the guard of the session
    /// `request` goes through, with the body cap and delivery that apply to it. Throws
    /// `CancellationError` when the calling task is cancelled, the refusal of an app's
    /// session that cannot carry it, and that of a header that cannot be sent.
    @inline(never)
    private func dataTask(for request: TransportRequest) throws -> DataTaskBox {
        try Task.checkCancellation()
        if let refusal { throw refusal.adding(scope: nil, url: request.url) }
        let guarded = request.asksForToken ? tokenRequests : requests
        return DataTaskBox(
            request: request, urlRequest: try Self.urlRequest(for: request), session: guarded.session,
            requestGuard: guarded.requestGuard, cap: configuration.maximumResponseBytes,
            delivery: Self.bodyDelivery(of: request))
    }

    /// What the data task that carried `request` answered, as a transport response; throws
    /// when it is not an HTTP answer, or came from another origin than the request's.
    @inline(never)
    private static func transportResponse(data: Data, response: URLResponse, for request: TransportRequest) throws
        -> TransportResponse
    {
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        if let finalURL = http.url, let finalOrigin = HTTPOrigin(url: finalURL),
            finalOrigin != HTTPOrigin(url: request.url)
        {
            throw FleetAuthError(
                reason: .redirectRefused,
                message:
                    "The answer came from another origin (\(finalOrigin)) than the request's; refusing it. Point the URL at the final origin.",
                url: request.url)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data, url: http.url ?? request.url)
    }

    /// How `request`'s answer reaches the guard: the one place that decides it. Token requests
    /// stream: a token backend is the operator's, reached a few times a vehicle-hour, and its
    /// answer is counted as it arrives. Fleet calls, a simulator's every update, come whole: a
    /// delegate call per response, chunk and completion woke a thread of the delegate queue for
    /// each, and cost a simulator 1.2 to 1.4 times the CPU per update of a bare URLSession (the
    /// Security article has the figures). Both are refused redirects, sent nothing stored, and
    /// capped.
    static func bodyDelivery(of request: TransportRequest) -> RequestGuard.BodyDelivery {
        request.asksForToken ? .streamed : .whole
    }

    /// URLSession's own ways of saying "cancelled" and "timed out", in the terms every
    /// transport uses: `CancellationError` and a `timedOut` ``/FleetAuthCore/FleetAuthError``.
    /// Any other `URLError` comes back with its code and a failing URL without user info,
    /// query or fragment, so that nothing the request carried reaches a log through it.
    package static func translate(_ error: any Error, for request: TransportRequest) -> any Error {
        guard let urlError = error as? URLError else { return error }
        if let problem = secureConnectionProblem(urlError) {
            let code = urlError.code == .unknown ? URLError.Code.secureConnectionFailed : urlError.code
            let fix =
                [.clientCertificateRejected, .clientCertificateRequired].contains(code)
                ? "Give the app's session the client certificate the server asks for (its delegate answers the client-certificate challenge)."
                : "Serve a certificate that an authority the device trusts signed for this host name; to trust another one, add its authority to the system's trust store (Linux), or pass URLSessionTransport(session:) a session whose delegate accepts it (Apple platforms; certificate pinning)."
            return FleetAuthError(
                reason: .insecureEndpoint,
                message:
                    "The TLS connection to \(request.url.host ?? "the server") failed (\(problem); URLError \(code.rawValue)), so nothing was sent; a retry will not change it. \(fix)",
                url: request.url, underlyingError: URLError(code, userInfo: safeUserInfo(for: request.url)))
        }
        let safe = URLError(urlError.code, userInfo: safeUserInfo(for: request.url))
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .timedOut:
            return FleetAuthError(
                reason: .timedOut,
                message:
                    "No answer within \(String(format: "%.1f", request.timeout)) s; check that the server is up, or raise the timeout.",
                url: request.url, underlyingError: safe)
        default: return safe
        }
    }

    /// What went wrong in a TLS connection that failed, or `nil` for another failure. Apple's
    /// URLSession names it by code; FoundationNetworking reports libcurl's TLS failures as
    /// code -1 (unknown) with libcurl's words ("SSL certificate problem: self-signed
    /// certificate"), which name the server's certificate and nothing the request carried.
    private static func secureConnectionProblem(_ error: URLError) -> String? {
        switch error.code {
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            return "the server's certificate is not signed by an authority the device trusts"
        case .serverCertificateHasBadDate: return "the server's certificate has expired"
        case .serverCertificateNotYetValid: return "the server's certificate is not valid yet"
        case .secureConnectionFailed: return "the TLS handshake failed"
        case .clientCertificateRejected, .clientCertificateRequired:
            return "the server asked for a client certificate it did not get or refused"
        case .unknown:
            let words = error.localizedDescription
            guard words.hasPrefix("SSL") || words.contains("certificate") || words.contains("TLS") else { return nil }
            return String(words.prefix(200)).escapingControlCharacters
        default: return nil
        }
    }

    /// A `URLError`'s user info naming `url` as FleetAuth's messages show it.
    private static func safeUserInfo(for url: URL) -> [String: Any] {
        URL(string: FleetAuthError.redacted(url)).map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:]
    }

    /// The `URLRequest` that carries `request`, its headers set at once
    /// (``headerFields(of:)``, which throws for a header that cannot be sent).
    private static func urlRequest(for request: TransportRequest) throws(FleetAuthError) -> URLRequest {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.httpShouldHandleCookies = false
        urlRequest.allHTTPHeaderFields = try headerFields(of: request)
        return urlRequest
    }
}

/// Over cleartext HTTP, a provider over the transport lets as many fetches make their first
/// attempt at once as its token requests' session opens connections to the host, and at least
/// ``URLSessionTransport/connectionsPerHost``: a fleet started together then holds tasks and a
/// request only for the fetches the session can send, not for every vehicle. The floor keeps an
/// app's session with a phone's few connections from holding a simulator's first tokens to a
/// few at a time. Over TLS the session may speak HTTP/2, which carries many requests on each
/// connection (FoundationNetworking's and Apple's sessions both do): there the transport sets no
/// bound.
extension URLSessionTransport: TokenRequestBoundedTransport {
    /// The token session's connections per host, at least ``connectionsPerHost``, for an
    /// endpoint over cleartext HTTP; `nil` over TLS.
    package func simultaneousRequests(to endpoint: TokenEndpoint) -> Int? {
        guard endpoint.isCleartextHTTP else { return nil }
        return max(Self.connectionsPerHost, tokenRequests.session.configuration.httpMaximumConnectionsPerHost)
    }
}

/// What `dump` and mirrors show of a transport: its options, and whether it sends through a
/// session made from an app's. Not the sessions: an app's configuration may hold header values
/// and stored credentials of the app's.
extension URLSessionTransport: CustomReflectable {
    /// The options, and whether the transport was made with an app's session.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "maximumResponseBytes": configuration.maximumResponseBytes, "madeWithAppSession": appSession != nil,
            ],
            displayStyle: .class)
    }
}
