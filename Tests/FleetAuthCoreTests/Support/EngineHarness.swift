import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation

/// An engine wired to an in-memory backend on a manual clock, with its events recorded.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
struct EngineHarness {
    let clock: ManualWallClock
    let backend: InMemoryTokenBackend
    let transport: InMemoryTransport
    let events: EventRecorder
    let engine: TokenEngine

    init(
        latency: TimeInterval = 0,
        backend configuration: InMemoryTokenBackend.Configuration = .init(),
        format: TokenResponseFormat? = nil,
        refresh: RefreshPolicy = RefreshPolicy(spreadsRefreshes: false),
        retry: RetryPolicy = RetryPolicy(jitter: 0),
        cacheCapacity: Int = 64,
        endpointTimeout: TimeInterval = 15,
        concurrentFetchLimit: Int? = nil,
        tokenRequestsAtOnce: Int? = nil
    ) throws {
        clock = ManualWallClock()
        backend = InMemoryTokenBackend(clock: clock, configuration: configuration)
        let transport = InMemoryTransport(clock: clock, latency: latency)
        transport.mount(backend, at: "/token")
        self.transport = transport
        let events = EventRecorder()
        self.events = events
        let endpoint = TokenEndpoint(
            url: "https://backend.example.com/token", format: format ?? configuration.format, timeout: endpointTimeout)
        // A transport that bounds its token requests, when asked for, sends through this one.
        let sender: any HTTPTransport = tokenRequestsAtOnce.map { BoundedTransport(transport, limit: $0) } ?? transport
        var engineConfiguration = TokenProviderConfiguration(
            endpoint: endpoint, transport: sender, clock: clock, refresh: refresh, retry: retry,
            cacheCapacity: cacheCapacity, observer: { events.record($0) })
        if let concurrentFetchLimit { engineConfiguration.concurrentFetchLimit = concurrentFetchLimit }
        engine = try TokenEngine(configuration: engineConfiguration)
    }

    /// Starts `count` concurrent fetches for `scope` on the clock and returns their tasks once
    /// the clock has settled: every caller has joined the fetch (or got its answer).
    func startFetches(_ count: Int, for scope: AuthorizationScope) async -> [Task<AuthToken, any Error>] {
        let tasks = (0..<count).map { _ in clock.startSimulated { [engine] in try await engine.token(for: scope) } }
        await clock.settle()
        return tasks
    }

    /// `task`'s result once the clock's work has settled, without moving the clock: throws
    /// ``ManualWallClock/Stalled`` (failing the test at once) if the task still waits for time.
    func settledResult(of task: Task<AuthToken, any Error>) async throws -> Result<AuthToken, any Error> {
        // Awaiting a task's result ignores cancellation: pass it on to the task.
        try await clock.atOnce {
            await withTaskCancellationHandler {
                await task.result
            } onCancel: {
                task.cancel()
            }
        }
    }
}

/// A transport that says it sends at most `limit` token requests at once, as a URL session
/// does behind its connections, and sends through `base` (which bounds nothing itself).
struct BoundedTransport: TokenRequestBoundedTransport {
    let base: any HTTPTransport
    let limit: Int

    init(_ base: any HTTPTransport, limit: Int) {
        (self.base, self.limit) = (base, limit)
    }

    func simultaneousRequests(to endpoint: TokenEndpoint) -> Int? { limit }

    func send(_ request: TransportRequest) async throws -> TransportResponse { try await base.send(request) }
}

/// Collects events from any thread.
final class EventRecorder: Sendable {
    private let state = LockedState<[TokenEvent]>([])

    func record(_ event: TokenEvent) { state.withLock { $0.append(event) } }

    var all: [TokenEvent] { state.withLock { $0 } }

    var descriptions: [String] { all.map(\.description) }

    func count(where predicate: (TokenEvent) -> Bool) -> Int { all.filter(predicate).count }
}

/// Crafts backend answers for parser tests.
enum Answers {
    static let serverNow = Date(timeIntervalSince1970: 1_800_000_000)

    static func jwt(
        id: String = "v-42", key: String = "vehicleid", iat: Double? = 1_800_000_000, lifetime: Double = 3600,
        exp: Double? = nil, extra: [String: Any] = [:]
    ) -> String {
        var payload: [String: Any] = [
            "iss": "minter", "sub": "minter", "aud": TokenRules.fleetServiceAudience, "authorization": [key: id],
        ]
        if let iat { payload["iat"] = iat }
        payload["exp"] = exp ?? ((iat ?? 1_800_000_000) + lifetime)
        for (name, value) in extra { payload[name] = value }
        return InMemoryTokenBackend.jwt(payload: payload)
    }

    static func json(_ object: [String: Any], status: Int = 200, date: Date? = serverNow) -> TransportResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return raw(body, status: status, date: date)
    }

    static func raw(_ body: Data, status: Int = 200, date: Date? = serverNow, headers: [String: String] = [:])
        -> TransportResponse
    {
        var headers = headers
        if let date { headers["Date"] = HTTPDate.format(date) }
        return TransportResponse(status: status, headers: headers, body: body)
    }
}
