public import FleetAuthCore
public import Foundation

/// Checks that an ``/FleetAuthCore/HTTPTransport`` behaves as FleetAuth relies on. Run it from your own
/// tests against your transport and a server that serves the conformance routes
/// (`InMemoryTransport.mountConformanceRoutes(clock:)` from this module, in process; the loopback fixture in
/// FleetAuth's own tests shows them over real HTTP):
///
/// - `GET|POST /conformance/echo` answers 200 with JSON `{method, query, headers, body}`
///   (header names lower-cased, body base64);
/// - `GET /conformance/status/{code}` answers that status with header `X-Conformance: yes`
///   and body `status {code}`;
/// - `GET /conformance/bytes?count=N` answers N bytes of `a`;
/// - `GET /conformance/redirect` answers 302 to another host;
/// - `GET /conformance/hang` does not answer for at least 30 seconds.
///
/// <!-- snippet setup:
/// import FleetAuthInMemory
/// import Foundation
/// typealias MyTransport = InMemoryTransport
/// let serverURL = URL(string: "http://127.0.0.1:8080")!
/// -->
/// ```swift
/// import Testing
///
/// @Test func myTransportConforms() async {
///     let suite = TransportConformanceSuite(transport: MyTransport(), baseURL: serverURL)
///     let failures = await suite.run()
///     #expect(failures.isEmpty, "\(failures)")
/// }
/// ```
public struct TransportConformanceSuite: Sendable {
    /// One failed check.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The check's name.
        public let check: String
        /// What was expected and what happened.
        public let detail: String
        /// `check: detail`.
        public var description: String { "\(check): \(detail)" }
    }

    /// The transport under test.
    public let transport: any HTTPTransport
    /// The server's base URL, such as `http://127.0.0.1:8080`.
    public let baseURL: URL
    /// How long, in seconds of real time, a request cancelled mid-flight may take to end
    /// before the `cancellation` check fails instead of hanging. Default 5.
    public let cancellationDeadline: TimeInterval

    /// Creates the suite.
    public init(transport: any HTTPTransport, baseURL: URL, cancellationDeadline: TimeInterval = 5) {
        self.transport = transport
        self.baseURL = baseURL
        self.cancellationDeadline = cancellationDeadline
    }

    /// The names of the checks, in the order ``run()`` runs them.
    public static let checkNames = [
        "get", "postBody", "headersRoundTrip", "nonSuccessStatus", "largeBody", "redirectNotFollowed",
        "cancellation",
    ]

    /// Runs every check and returns the failures; empty means the transport conforms.
    public func run() async -> [Failure] {
        var failures: [Failure] = []
        for name in Self.checkNames {
            if let failure = await check(name) { failures.append(failure) }
        }
        return failures
    }

    /// Runs one check by name; `nil` when it passes.
    public func check(_ name: String) async -> Failure? {
        do {
            switch name {
            case "get": return try await checkGet()
            case "postBody": return try await checkPostBody()
            case "headersRoundTrip": return try await checkHeaders()
            case "nonSuccessStatus": return try await checkStatus()
            case "largeBody": return try await checkLargeBody()
            case "redirectNotFollowed": return try await checkRedirect()
            case "cancellation": return await checkCancellation()
            default: return Failure(check: name, detail: "no such check")
            }
        } catch {
            return Failure(check: name, detail: "threw \(type(of: error)): \(error)")
        }
    }

    private func url(_ path: String, query: String? = nil) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + path
        components.percentEncodedQuery = query
        return components.url!
    }

    private func echo(_ request: TransportRequest) async throws -> (TransportResponse, [String: Any]) {
        let response = try await transport.send(request)
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
        return (response, object)
    }

    private func checkGet() async throws -> Failure? {
        let (response, object) = try await echo(
            TransportRequest(url: url("/conformance/echo", query: "vehicleId=v%2B1")))
        guard response.status == 200 else {
            return Failure(check: "get", detail: "status \(response.status), expected 200")
        }
        guard object["method"] as? String == "GET" else {
            return Failure(check: "get", detail: "server saw method \(object["method"] ?? "none")")
        }
        guard object["query"] as? String == "vehicleId=v%2B1" else {
            return Failure(check: "get", detail: "query arrived as \(object["query"] ?? "none"), expected it unchanged")
        }
        return nil
    }

    private func checkPostBody() async throws -> Failure? {
        let body = Data(#"{"vehicleId":"v-1"}"#.utf8)
        let request = TransportRequest(
            method: "POST", url: url("/conformance/echo"), headers: ["Content-Type": "application/json"], body: body)
        let (response, object) = try await echo(request)
        guard response.status == 200, object["method"] as? String == "POST" else {
            return Failure(check: "postBody", detail: "status \(response.status), method \(object["method"] ?? "none")")
        }
        guard let echoed = (object["body"] as? String).flatMap({ Data(base64Encoded: $0) }), echoed == body else {
            return Failure(check: "postBody", detail: "the body did not arrive intact")
        }
        return nil
    }

    private func checkHeaders() async throws -> Failure? {
        let request = TransportRequest(url: url("/conformance/echo"), headers: ["X-Conformance-Value": "abc 123"])
        let (_, object) = try await echo(request)
        let headers = object["headers"] as? [String: Any] ?? [:]
        guard headers["x-conformance-value"] as? String == "abc 123" else {
            return Failure(check: "headersRoundTrip", detail: "request header did not arrive")
        }
        return nil
    }

    private func checkStatus() async throws -> Failure? {
        for status in [401, 404, 429, 503] {
            let response = try await transport.send(TransportRequest(url: url("/conformance/status/\(status)")))
            guard response.status == status else {
                return Failure(
                    check: "nonSuccessStatus",
                    detail: "got \(response.status) for \(status): return non-2xx responses, do not throw")
            }
            guard response.header("x-conformance") == "yes" else {
                return Failure(check: "nonSuccessStatus", detail: "response headers were lost for \(status)")
            }
            guard String(decoding: response.body, as: UTF8.self) == "status \(status)" else {
                return Failure(check: "nonSuccessStatus", detail: "body lost for \(status)")
            }
        }
        return nil
    }

    private func checkLargeBody() async throws -> Failure? {
        let count = 48 * 1024
        let response = try await transport.send(
            TransportRequest(url: url("/conformance/bytes", query: "count=\(count)")))
        guard response.status == 200, response.body.count == count,
            response.body.allSatisfy({ $0 == UInt8(ascii: "a") })
        else {
            return Failure(
                check: "largeBody", detail: "status \(response.status), \(response.body.count) of \(count) bytes")
        }
        return nil
    }

    private func checkRedirect() async throws -> Failure? {
        let response = try await transport.send(TransportRequest(url: url("/conformance/redirect")))
        guard (300...399).contains(response.status) else {
            return Failure(
                check: "redirectNotFollowed",
                detail:
                    "got \(response.status): the transport followed a redirect to another host; return the 3xx instead")
        }
        return nil
    }

    /// Cancels a request to the hanging route once it is in flight (after a few
    /// milliseconds of real time, well after `send` began), and fails rather than hangs
    /// when the transport does not end it within ``cancellationDeadline``: a transport
    /// that checks cancellation only before it sends defeats every timeout of the SDK.
    private func checkCancellation() async -> Failure? {
        let transport = self.transport
        let request = TransportRequest(url: url("/conformance/hang"), timeout: 60)
        let outcome = LockedState<CheckedContinuation<Result<TransportResponse, any Error>?, Never>?>(nil)
        let finish = { @Sendable (result: Result<TransportResponse, any Error>?) in
            let waiter = outcome.withLock { waiter in
                defer { waiter = nil }
                return waiter
            }
            waiter?.resume(returning: result)
        }
        let deadline = cancellationDeadline
        let result: Result<TransportResponse, any Error>? = await withCheckedContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let send = Task { try await transport.send(request) }
            Task {
                try? await Task.sleep(for: .milliseconds(50))
                send.cancel()
                try? await Task.sleep(nanoseconds: UInt64(deadline * 1_000_000_000))
                finish(nil)
            }
            Task { finish(await send.result) }
        }
        switch result {
        case nil:
            return Failure(
                check: "cancellation",
                detail:
                    "a request cancelled in flight had not ended after \(deadline); stop the request when the task is cancelled, not only before sending"
            )
        case .success(let response)?:
            return Failure(
                check: "cancellation",
                detail: "a cancelled request returned HTTP \(response.status); throw CancellationError")
        case .failure(let error)?:
            guard error is CancellationError else {
                return Failure(
                    check: "cancellation",
                    detail: "a cancelled request threw \(type(of: error)); throw CancellationError")
            }
            return nil
        }
    }
}
