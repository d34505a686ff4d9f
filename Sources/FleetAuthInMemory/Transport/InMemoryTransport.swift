public import FleetAuthCore
public import Foundation

/// An ``/FleetAuthCore/HTTPTransport`` that answers in process: for tests, demos and simulations.
///
/// Requests are matched to routes (method and path) whose closures answer them; every
/// request is recorded; latency is slept on the injected clock; faults can be injected
/// for the next requests, or for one path over a span of time. Unmatched requests get 404.
///
/// ```swift
/// let clock = ManualWallClock()
/// let backend = InMemoryTokenBackend(clock: clock)
/// let transport = InMemoryTransport(clock: clock)
/// transport.mount(backend, at: "/token")
/// ```
public final class InMemoryTransport: HTTPTransport, InProcessTransport {
    /// Answers a request.
    package typealias Handler = @Sendable (TransportRequest) async throws -> TransportResponse
    /// Answers a request, given with its URL's path (read once a request: reading it parses
    /// the URL). Runs on the executor of the request's task: the doubles' own handlers
    /// answer at once, and a hop to another executor and back cost task switches at every
    /// request of a simulator.
    package typealias PathHandler =
        nonisolated(nonsending) @Sendable (TransportRequest, _ path: String) async throws -> TransportResponse

    /// A failure to inject in place of a route's answer.
    public struct Fault: Sendable {
        package enum Value: Sendable {
            case connectionFailure
            case status(Int, headers: [String: String])
            case hang
            case delay(TimeInterval)
        }
        package let value: Value

        /// The request fails with `URLError(.cannotConnectToHost)`, as if refused.
        public static let connectionFailure = Fault(value: .connectionFailure)
        /// The route is skipped and this status answers, with an empty body.
        public static func status(_ status: Int, headers: [String: String] = [:]) -> Fault {
            Fault(value: .status(status, headers: headers))
        }
        /// The request never answers; only cancellation ends it.
        public static let hang = Fault(value: .hang)
        /// The request waits this many extra seconds on the clock, then proceeds.
        public static func delay(_ seconds: TimeInterval) -> Fault { Fault(value: .delay(seconds)) }
    }

    /// Chooses a fault for the `index`-th request (0-based), or `nil` for none.
    package typealias FaultInjector = @Sendable (_ request: TransportRequest, _ index: Int) -> Fault?

    private struct Route {
        let method: String?
        let path: String
        let matchesPrefix: Bool
        let handler: PathHandler

        func matches(_ request: TransportRequest, path: String) -> Bool {
            guard method == nil || method == request.method else { return false }
            if matchesPrefix { return path.hasPrefix(self.path) }
            return path == self.path || PathPattern.fields(of: request.url, matching: self.path) != nil
        }
    }

    /// A fault for every request to a path prefix during a span of the clock's uptime.
    private struct FaultWindow {
        let fault: Fault
        let pathPrefix: String
        let span: Range<TimeInterval>
    }

    private struct State {
        var routes: [Route] = []
        var requests = RecentHistory<TransportRequest>()
        var scriptedFaults: [Fault] = []
        var windows: [FaultWindow] = []
        var injector: FaultInjector?
        var latency: TimeInterval
    }

    private let clock: any WallClock
    /// `clock`, when it is the manual one: its sleep is called directly.
    private let manualClock: ManualWallClock?
    private let state: LockedState<State>

    /// Creates a transport whose answers take `latency` seconds on `clock`.
    public init(clock: any WallClock = SystemWallClock(), latency: TimeInterval = 0) {
        self.clock = clock
        self.manualClock = clock as? ManualWallClock
        self.state = LockedState(State(latency: latency))
    }

    /// Answers requests to `path` (and `method`, if given) with `handler`. Later routes
    /// for the same path take precedence. Placeholder segments such as `{vehicleId}` match
    /// any one segment, as in ``mount(_:at:)``.
    public func route(
        _ path: String, method: String? = nil,
        handler: @escaping @Sendable (TransportRequest) async throws -> TransportResponse
    ) {
        let route = Route(method: method, path: path, matchesPrefix: false) { request, _ in try await handler(request) }
        state.withLock { $0.routes.insert(route, at: 0) }
    }

    /// Answers requests to every path that starts with `prefix` with `handler`.
    package func route(prefix: String, method: String? = nil, handler: @escaping Handler) {
        route(prefix: prefix, method: method) { request, _ in try await handler(request) }
    }

    /// Answers every request to every path that starts with `prefix` with `handler`, which
    /// is given the path too.
    package func route(prefix: String, method: String? = nil, pathHandler handler: @escaping PathHandler) {
        state.withLock {
            $0.routes.insert(Route(method: method, path: prefix, matchesPrefix: true, handler: handler), at: 0)
        }
    }

    /// Answers every request to `path` with the token backend.
    ///
    /// `path` may name the ID with the placeholders of ``/FleetAuthCore/TokenEndpoint``'s URL,
    /// whole path segments as in `"/token/driver/{vehicleId}"`, so a test mounts the backend
    /// at its production endpoint's path; the backend reads the ID from the path (`{id}` as
    /// a vehicle ID). Without a placeholder it reads the query items FleetAuth adds.
    ///
    /// ```swift
    /// let clock = ManualWallClock()
    /// let transport = InMemoryTransport(clock: clock)
    /// transport.mount(InMemoryTokenBackend(clock: clock), at: "/token/driver/{vehicleId}")
    /// ```
    public func mount(_ backend: InMemoryTokenBackend, at path: String) {
        route(path) { request in
            try await backend.respond(
                to: request, pathFields: PathPattern.fields(of: request.url, matching: path) ?? [:])
        }
    }

    /// Faults for the next requests, one each, in order.
    public func inject(_ faults: [Fault]) {
        state.withLock { $0.scriptedFaults.append(contentsOf: faults) }
    }

    /// `fault` for every request whose path starts with `pathPrefix`, sent from `start`
    /// seconds after now for `duration` seconds of the clock's time: an outage of one
    /// backend while the others answer. Faults queued by ``inject(_:)`` go first; of
    /// overlapping windows, the one added last applies.
    ///
    /// ```swift
    /// let transport = InMemoryTransport(clock: ManualWallClock())
    /// // Every token request in the next 5 minutes answers 503; fleet calls go through.
    /// transport.inject(.status(503), onPathsStartingWith: "/token", for: 300)
    /// ```
    public func inject(
        _ fault: Fault, onPathsStartingWith pathPrefix: String, from start: TimeInterval = 0, for duration: TimeInterval
    ) {
        let begin = clock.uptime() + start
        state.withLock {
            $0.windows.append(FaultWindow(fault: fault, pathPrefix: pathPrefix, span: begin..<(begin + duration)))
        }
    }

    /// A rule choosing faults per request; `nil` removes it. Scripted faults go first.
    package func setFaultInjector(_ injector: FaultInjector?) {
        state.withLock { $0.injector = injector }
    }

    /// The latency of every answer, in seconds of the transport's clock; a change applies to
    /// the next request.
    public var latency: TimeInterval {
        get { state.withLock { $0.latency } }
        set { state.withLock { $0.latency = newValue } }
    }

    /// The requests received, in order, up to the latest 10,000 (``requestCount`` counts
    /// them all): every request of a test, the last steps of a simulator, whose memory
    /// would otherwise grow with simulated time.
    ///
    /// - Important: Count with ``requestCount``: past 10,000 requests, `requests.count` stays
    ///   at 10,000.
    public var requests: [TransportRequest] {
        state.withLock { $0.requests.elements }
    }

    /// How many requests were received, including those ``requests`` no longer keeps.
    public var requestCount: Int {
        state.withLock { $0.requests.total }
    }

    /// Records the request, waits the latency, applies any fault, then routes it.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try Task.checkCancellation()
        let path = request.url.routingPath
        let (fault, latency, handler) = admit(request, path: path)
        if latency > 0 { try await sleep(for: latency) }
        if let fault { return try await answer(request, path: path, with: fault, handler: handler) }
        return try await routedAnswer(to: request, path: path, handler: handler)
    }

    /// The answer of `handler` (404 for none) to `request`, with the request's URL.
    ///
    /// This and ``answer(_:path:with:handler:)`` are not inlined (every request in flight
    /// holds the frame of ``send(_:)`` while it sleeps, and theirs only after) and run on
    /// their caller's executor (a hop into each and back cost three calls of
    /// `swift_task_switch` a request).
    @inline(never)
    nonisolated(nonsending) private func routedAnswer(to request: TransportRequest, path: String, handler: PathHandler?)
        async throws
        -> TransportResponse
    {
        guard let handler else { return Self.noRoute(for: request) }
        var response = try await handler(request, path)
        if response.url == nil { response.url = request.url }
        return response
    }

    /// The answer to `request` given `fault` in place of its route's.
    @inline(never)
    nonisolated(nonsending) private func answer(
        _ request: TransportRequest, path: String, with fault: Fault, handler: PathHandler?
    )
        async throws -> TransportResponse
    {
        switch fault.value {
        case .connectionFailure: throw URLError(.cannotConnectToHost)
        case .status(let status, let headers):
            return TransportResponse(status: status, headers: headers, url: request.url)
        case .hang:
            while true { try await sleep(for: 86_400) }
        case .delay(let seconds):
            try await sleep(for: seconds)
            return try await routedAnswer(to: request, path: path, handler: handler)
        }
    }

    /// The answer to a request no route takes.
    @inline(never)
    private static func noRoute(for request: TransportRequest) -> TransportResponse {
        TransportResponse(
            status: 404, headers: ["Content-Type": "text/plain"], body: Data("no route".utf8), url: request.url)
    }

    /// Sleeps `seconds` on the clock: the manual clock's sleep is called directly, as every
    /// request in flight holds the frames of this sleep, and its public method through the
    /// protocol added two.
    @inline(__always)
    nonisolated(nonsending) private func sleep(for seconds: TimeInterval) async throws {
        if let manualClock {
            try await manualClock.sleepOnCallersExecutor(for: seconds)
        } else {
            try await clock.sleep(for: seconds)
        }
    }

    /// Records `request` and returns its fault, the latency and the handler of its route.
    /// Not inlined: the frame of every request in flight would hold its values.
    @inline(never)
    private func admit(_ request: TransportRequest, path: String) -> (Fault?, TimeInterval, PathHandler?) {
        let admission = state.withLock { state in
            let index = state.requests.total
            state.requests.append(request)
            let scripted = state.scriptedFaults.isEmpty ? nil : state.scriptedFaults.removeFirst()
            let now = clock.uptime()
            let windowed = state.windows.last { $0.span.contains(now) && path.hasPrefix($0.pathPrefix) }
            return Admission(
                fault: scripted ?? windowed?.fault, injector: state.injector, index: index, latency: state.latency,
                route: state.routes.first { $0.matches(request, path: path) })
        }
        // The app's injector runs outside the lock: it may read this transport.
        let fault = admission.fault ?? admission.injector?(request, admission.index)
        return (fault, admission.latency, admission.route?.handler)
    }

    /// What the lock gives `admit(_:path:)`. A struct, not a tuple: closures in a tuple
    /// returned through the lock's generic result were wrapped in a heap-allocated thunk
    /// each, at every request.
    private struct Admission {
        let fault: Fault?
        let injector: FaultInjector?
        let index: Int
        let latency: TimeInterval
        let route: Route?
    }
}
