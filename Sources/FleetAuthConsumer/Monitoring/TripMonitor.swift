public import Foundation

/// Follows trips (and a delivery fleet's shipments) for a consumer app: fetches each one's
/// state from the fleet service with its own token, on a schedule driven by the injected
/// clock.
///
/// Each fetch is `GET {base}/v1/providers/{providerID}/trips/{tripID}` with
/// `Authorization: Bearer <token>`; a token the fleet service rejects (401/403) is
/// invalidated and the fetch is repeated once with a fresh one.
///
/// <!-- snippet setup:
/// import Foundation
/// import FleetAuthURLSession
/// let fleetURL = URL(string: "https://fleet.example.com")!
/// let provider = try ConsumerTokenProvider(
///     endpoint: TokenEndpoint(url: "https://api.example.com/token/consumer/{tripId}"), transport: URLSessionTransport())
/// -->
/// ```swift
/// let monitor = try TripMonitor(
///     fleetService: FleetServiceEndpoint(baseURL: fleetURL, providerID: "my-project"),
///     authorization: provider, transport: URLSessionTransport()
/// )
/// for await update in monitor.updates(for: ["t-1", "t-2"], every: 10) {
///     print(update.followedID, (try? update.result.get())?.status ?? "unavailable")
/// }
/// ```
public final class TripMonitor: Sendable {
    /// The fleet service and provider.
    public let fleetService: FleetServiceEndpoint
    private let authorization: any ConsumerAuthorization
    private let transport: any HTTPTransport
    private let clock: any WallClock

    /// Creates a monitor; throws a `caller` fault naming the field and the rule for an empty
    /// or malformed provider ID, or a fleet service URL that is not https (or loopback http).
    public init(
        fleetService: FleetServiceEndpoint, authorization: any ConsumerAuthorization, transport: any HTTPTransport,
        clock: any WallClock = SystemWallClock()
    ) throws(FleetServiceError) {
        try fleetService.validate()
        self.fleetService = fleetService
        self.authorization = authorization
        self.transport = transport
        self.clock = clock
    }

    /// Creates a monitor of trips whose tokens come from `authorization`: a provider of the
    /// platform consumer SDK's shape, such as one ported from the platform's consumer sample. It
    /// supplies trips only: following a tracking ID (``fetchTracking(_:)``) fails with
    /// `invalidConfiguration`. Throws as ``init(fleetService:authorization:transport:clock:)``.
    public convenience init(
        fleetService: FleetServiceEndpoint, authorization tripAuthorization: some TripAuthorization,
        transport: any HTTPTransport,
        clock: any WallClock = SystemWallClock()
    ) throws(FleetServiceError) {
        try self.init(
            fleetService: fleetService, authorization: TripTokensForConsumers(trips: tripAuthorization),
            transport: transport, clock: clock)
    }

    /// Fetches one trip's state now.
    public func fetchTrip(_ tripID: String) async throws(FleetServiceError) -> TripSnapshot {
        try await fetch(ConsumerAuthorizationContext(tripID: tripID), url: try fleetService.tripURL(tripID))
    }

    /// Fetches one shipment's tracking state now (`GET …/taskTrackingInfo/{trackingID}`,
    /// with a token for that tracking ID).
    public func fetchTracking(_ trackingID: String) async throws(FleetServiceError) -> TripSnapshot {
        try await fetch(.tracking(trackingID), url: try fleetService.trackingURL(trackingID))
    }

    private func fetch(_ context: ConsumerAuthorizationContext, url: URL) async throws(FleetServiceError)
        -> TripSnapshot
    {
        let request = TransportRequest(
            method: "GET", url: url, headers: ["Accept": "application/json"], timeout: fleetService.timeout)
        let caller = AuthorizedCaller(
            context: context, authorization: authorization, transport: transport, clock: clock)
        let delivery = try await caller.deliver(request)
        guard
            let snapshot = TripSnapshot(tripID: context.scope.id, body: delivery.response.body, receivedAt: clock.now())
        else {
            throw FleetServiceError(
                fault: .service, message: "The fleet service's trip answer is not a JSON object.", scope: context.scope,
                status: delivery.response.status, tokenFingerprint: delivery.tokenFingerprint)
        }
        return snapshot
    }

    /// Follows `tripIDs` and a delivery fleet's `trackingIDs` at once, each with its own
    /// token, fetching each every `interval` seconds of the clock, the first time at once.
    /// Ends when the consumer stops iterating (the fetch tasks are cancelled) or after
    /// `rounds` fetches each if given.
    public func updates(
        for tripIDs: [String], trackingIDs: [String] = [], every interval: TimeInterval, rounds: Int? = nil
    ) -> AsyncStream<TripUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: TripUpdate.self)
        let followed = Set(tripIDs.map(AuthorizationScope.trip) + trackingIDs.map(AuthorizationScope.tracking))
        let task = clock.startTask {
            await withTaskGroup(of: Void.self) { group in
                for scope in followed {
                    group.addTask { await self.follow(scope, every: interval, rounds: rounds, into: continuation) }
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func follow(
        _ scope: AuthorizationScope, every interval: TimeInterval, rounds: Int?,
        into continuation: AsyncStream<TripUpdate>.Continuation
    ) async {
        var round = 0
        while !Task.isCancelled, rounds.map({ round < $0 }) ?? true {
            round += 1
            let result: Result<TripSnapshot, FleetServiceError>
            do {
                result = .success(
                    try await scope.kind == .tracking ? fetchTracking(scope.id) : fetchTrip(scope.id))
            } catch {
                result = .failure(error)
            }
            if Task.isCancelled { return }
            continuation.yield(TripUpdate(scope: scope, result: result))
            if let rounds, round >= rounds { return }
            do { try await clock.sleep(for: max(interval, 0.001)) } catch { return }
        }
    }
}
