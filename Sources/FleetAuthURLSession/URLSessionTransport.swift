public import FleetAuthCore

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// The production ``/FleetAuthCore/HTTPTransport``, over `URLSession` (FoundationNetworking on Linux).
///
/// By default it makes its own ephemeral sessions that keep no cookies or cache and
/// refuse every redirect (the 3xx answer is returned as is, so credentials never follow
/// a redirect to another host). Responses over ``Configuration/maximumResponseBytes``
/// fail with `responseTooLarge`. Cancelling the calling task cancels the data task.
///
/// One transport serves a phone's single vehicle and a simulator's thousands alike: its
/// sessions open up to 64 connections per host (the platform's default is 6 on Linux, which
/// queues a simulator's requests until their timeouts run out while they wait), and token
/// requests go through a session of their own, so that they never wait behind the
/// fleet-service calls that need their tokens. With a session of the app's
/// (``init(session:configuration:)``) every request goes through that one session, and its
/// configuration decides both.
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
        /// The largest body accepted, in bytes. Default 1 MiB.
        public var maximumResponseBytes: Int

        /// Creates a configuration.
        public init(maximumResponseBytes: Int = 1 << 20) {
            self.maximumResponseBytes = maximumResponseBytes
        }
    }

    /// The session requests go through; with the transport's own sessions, the one for
    /// everything but token requests.
    public let session: URLSession
    /// The options in force.
    public let configuration: Configuration
    /// Set when the transport made its sessions: bodies then stream through them.
    private let streaming: StreamingDelegate?
    /// The session of token requests and its delegate, when the transport made its sessions.
    private let tokenSession: (session: URLSession, streaming: StreamingDelegate)?

    /// Connections per host each of the transport's own sessions opens: enough for a
    /// simulator's thousands of vehicles on one fleet service, no cost to a phone's one.
    package static let connectionsPerHost = 64

    /// Creates a transport with its own ephemeral sessions that refuse redirects: one for
    /// token requests, one for everything else, each with up to 64 connections per host.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(
            session: Self.ownSession(), configuration: configuration, tokenSession: Self.ownSession())
    }

    /// Creates a transport over the app's own session. Redirect handling is then the
    /// session delegate's; the transport still fails a response whose final URL is on
    /// another host than the request's, and one over the cap once it has arrived. Token
    /// requests share the session with every other request: see the Fleet simulators
    /// article of FleetAuthDriver for what a simulator's session should set.
    public convenience init(session: URLSession, configuration: Configuration = Configuration()) {
        self.init(session: (session, nil), configuration: configuration, tokenSession: nil)
    }

    private init(
        session: (URLSession, StreamingDelegate?), configuration: Configuration,
        tokenSession: (URLSession, StreamingDelegate?)?
    ) {
        self.session = session.0
        self.streaming = session.1
        self.configuration = configuration
        self.tokenSession = tokenSession.flatMap { session, streaming in streaming.map { (session, $0) } }
    }

    /// An ephemeral session that keeps no cookies or cache, refuses redirects and streams
    /// bodies through its own delegate.
    private static func ownSession() -> (URLSession, StreamingDelegate?) {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpMaximumConnectionsPerHost = connectionsPerHost
        let streaming = StreamingDelegate()
        return (URLSession(configuration: sessionConfiguration, delegate: streaming, delegateQueue: nil), streaming)
    }

    deinit {
        if streaming != nil { session.finishTasksAndInvalidate() }
        tokenSession?.session.finishTasksAndInvalidate()
    }

    /// The most bytes one body has held in this transport's own session, for tests of the
    /// cap; 0 with a session of the app's.
    package var peakBufferedBytes: Int {
        max(streaming?.peakBufferedBytes ?? 0, tokenSession?.streaming.peakBufferedBytes ?? 0)
    }

    /// The maximum connections per host of the session `request` goes through.
    package func connectionLimit(for request: TransportRequest) -> Int {
        (request.asksForToken ? tokenSession?.session ?? session : session).configuration
            .httpMaximumConnectionsPerHost
    }

    /// Sends the request with a data task; throws `CancellationError` if the calling task
    /// is cancelled, `URLError` for network failures, and ``/FleetAuthCore/FleetAuthError`` for timeouts,
    /// oversized bodies and cross-host redirects.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try Task.checkCancellation()
        let urlRequest = Self.urlRequest(for: request)
        let box = DataTaskBox()
        let (session, streaming) =
            if request.asksForToken, let tokenSession { (tokenSession.session, Optional(tokenSession.streaming)) } else
            {
                (session, streaming)
            }
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if let streaming {
                    let task = session.dataTask(with: urlRequest)
                    streaming.follow(
                        task, request: request, cap: configuration.maximumResponseBytes, continuation: continuation)
                    box.start(task)
                    return
                }
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: Self.translate(error, for: request))
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                box.start(task)
            }
        } onCancel: {
            box.cancel()
        }
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        if let finalHost = http.url?.host, finalHost.lowercased() != request.url.host?.lowercased() {
            throw FleetAuthError(
                reason: .redirectRefused,
                message:
                    "The request was redirected to another host (\(finalHost)); refusing its answer. Point the URL at the final host.",
                url: request.url)
        }
        guard data.count <= configuration.maximumResponseBytes else {
            throw FleetAuthError(
                reason: .responseTooLarge,
                message:
                    "The body has \(data.count) bytes, over the transport's \(configuration.maximumResponseBytes)-byte cap.",
                url: request.url, status: http.statusCode)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data, url: http.url ?? request.url)
    }

    /// URLSession's own ways of saying "cancelled" and "timed out", in the terms every
    /// transport uses: `CancellationError` and a `timedOut` ``/FleetAuthCore/FleetAuthError``.
    package static func translate(_ error: any Error, for request: TransportRequest) -> any Error {
        switch (error as? URLError)?.code {
        case .cancelled?: return CancellationError()
        case .timedOut?:
            return FleetAuthError(
                reason: .timedOut,
                message:
                    "No answer within \(String(format: "%.1f", request.timeout)) s; check that the server is up, or raise the timeout.",
                url: request.url, underlyingError: error)
        default: return error
        }
    }

    private static func urlRequest(for request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }
}

/// Holds a data task so that cancellation, which may arrive before or after the task
/// starts, always reaches it.
private final class DataTaskBox: @unchecked Sendable {
    // Safe because `task` and `cancelled` are only read and written while `lock` is held.
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        // A task cancelled before it starts still runs its completion (with `cancelled`).
        if cancelled { task.cancel() }
        task.resume()
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
