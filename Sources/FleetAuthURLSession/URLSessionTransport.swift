public import FleetAuthCore

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// The production ``/FleetAuthCore/HTTPTransport``, over `URLSession` (FoundationNetworking on Linux).
///
/// By default it makes its own ephemeral session that keeps no cookies or cache and
/// refuses every redirect (the 3xx answer is returned as is, so credentials never follow
/// a redirect to another host). Responses over ``Configuration/maximumResponseBytes``
/// fail with `responseTooLarge`. Cancelling the calling task cancels the data task.
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

    /// The session requests go through.
    public let session: URLSession
    /// The options in force.
    public let configuration: Configuration
    /// Set when the transport made its session: bodies then stream through it.
    private let streaming: StreamingDelegate?

    /// Creates a transport with its own ephemeral session that refuses redirects.
    public convenience init(configuration: Configuration = Configuration()) {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let streaming = StreamingDelegate()
        let session = URLSession(configuration: sessionConfiguration, delegate: streaming, delegateQueue: nil)
        self.init(session: session, configuration: configuration, streaming: streaming)
    }

    /// Creates a transport over the app's own session. Redirect handling is then the
    /// session delegate's; the transport still fails a response whose final URL is on
    /// another host than the request's, and one over the cap once it has arrived.
    public convenience init(session: URLSession, configuration: Configuration = Configuration()) {
        self.init(session: session, configuration: configuration, streaming: nil)
    }

    private init(session: URLSession, configuration: Configuration, streaming: StreamingDelegate?) {
        self.session = session
        self.configuration = configuration
        self.streaming = streaming
    }

    deinit {
        if streaming != nil { session.finishTasksAndInvalidate() }
    }

    /// The most bytes one body has held in this transport's own session, for tests of the
    /// cap; 0 with a session of the app's.
    package var peakBufferedBytes: Int { streaming?.peakBufferedBytes ?? 0 }

    /// Sends the request with a data task; throws `CancellationError` if the calling task
    /// is cancelled, `URLError` for network failures, and ``/FleetAuthCore/FleetAuthError`` for timeouts,
    /// oversized bodies and cross-host redirects.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try Task.checkCancellation()
        let urlRequest = Self.urlRequest(for: request)
        let box = DataTaskBox()
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
