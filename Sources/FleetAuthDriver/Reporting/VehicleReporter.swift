import Foundation

/// Sends a vehicle's location updates to the fleet service, each with a token fetched at
/// update time, the way the driver SDK does.
///
/// Each ``report(_:)`` sends `PUT {base}/v1/providers/{providerID}/vehicles/{vehicleID}?updateMask=lastLocation`
/// (for a delivery fleet, `PATCH …/deliveryVehicles/{vehicleID}?updateMask=lastLocation`)
/// with `Authorization: Bearer <token>`. Updates are sent one at a time, in the order
/// they were reported. A token the fleet service rejects (401/403) is invalidated and the
/// update is sent once more with a fresh one — except a 403 for a token minted within the
/// last minute, which a new token would repeat (the error says so); a token known to have
/// expired is never sent.
///
/// <!-- snippet setup:
/// import Foundation
/// import FleetAuthURLSession
/// let fleetURL = URL(string: "https://fleet.example.com")!
/// let provider = try DriverTokenProvider(
///     endpoint: TokenEndpoint(url: "https://api.example.com/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp), transport: URLSessionTransport())
/// -->
/// ```swift
/// let reporter = try VehicleReporter(
///     fleetService: FleetServiceEndpoint(baseURL: fleetURL, providerID: "my-project"),
///     vehicleID: "v-42", authorization: provider, transport: URLSessionTransport()
/// )
/// let receipt = try await reporter.report(VehicleLocation(latitude: 52.52, longitude: 13.40, timestamp: .now))
/// ```
public final class VehicleReporter: Sendable {
    /// What the fleet service accepted.
    public struct Receipt: Sendable {
        /// The status of the accepted call.
        public let status: Int
        /// The fingerprint of the token that was accepted.
        public let tokenFingerprint: String
        /// How many requests the update took: 1, or 2 after a rejected token.
        public let attempts: Int

        /// A receipt as given, for an app's test of what it shows after an update.
        public init(status: Int, tokenFingerprint: String, attempts: Int = 1) {
            (self.status, self.tokenFingerprint, self.attempts) = (status, tokenFingerprint, attempts)
        }
    }

    // The fields every update reads come first, the queue first of all, near the object's
    // reference count (most often on its cache line), which the end of each update's task
    // touches, from memory the rest of a simulated fleet's updates have pushed out of the
    // processor's caches since the update began.
    private let queue = OrderedQueue()
    /// Where every update goes, built once: the vehicle does not change. (Put together for each
    /// update as hand-written code does, it saved about 460 bytes a vehicle and cost a quarter
    /// of an update through the in-memory doubles: 11,000 instructions, a simulator's time.)
    private let updateURL: URL
    /// Whether `updateURL` may carry a token, judged once: every update goes there.
    private let updateURLCarriesTokens: Bool
    /// Whether each update runs in a task of its own: not through an in-process transport,
    /// whose calls cost less than the task (see `updateInTaskOfItsOwn(_:)`).
    private let updatesInTasksOfTheirOwn: Bool
    private let caller: AuthorizedCaller<DriverAuthorizationContext>

    /// The fleet service and provider.
    public let fleetService: FleetServiceEndpoint
    /// The vehicle reported on.
    public let context: DriverAuthorizationContext

    /// Creates a reporter; throws a `caller` fault naming the field and the rule for an
    /// empty or malformed vehicle, task or provider ID, or a fleet service URL that is not
    /// https (or loopback http).
    public init(
        fleetService: FleetServiceEndpoint, vehicleID: String, taskID: String? = nil,
        authorization: any DriverAuthorization, transport: any HTTPTransport,
        clock: any WallClock = SystemWallClock()
    ) throws(FleetServiceError) {
        let context = DriverAuthorizationContext(vehicleID: vehicleID, taskID: taskID)
        try fleetService.validate(context.scope)
        self.updateURL = try fleetService.vehicleURL(context.vehicleID, query: "updateMask=lastLocation")
        self.fleetService = fleetService
        self.context = context
        self.caller = AuthorizedCaller(
            context: context, authorization: authorization, transport: transport, clock: clock)
        // A URL it refuses is refused again at each update, with the caller's message.
        self.updateURLCarriesTokens = (try? caller.checkTransport(updateURL)) != nil
        self.updatesInTasksOfTheirOwn = !(transport is any InProcessTransport)
    }

    /// Throws the error of a location that is not plausible.
    @inline(never)
    private func implausible(_ problem: String) throws -> Never {
        throw FleetServiceError(
            fault: .caller, message: "The location is not plausible: \(problem). Nothing was sent.",
            scope: context.scope)
    }

    /// Throws the error of an update cancelled while it waited for its turn.
    @inline(never)
    private func cancelledBeforeTurn() throws -> Never {
        throw FleetServiceError(
            fault: .caller, message: "The update was cancelled before its turn; nothing was sent.",
            scope: context.scope, underlyingError: CancellationError())
    }

    /// The request that sends `location` with `token`, authorized. Not inlined: every update
    /// in flight holds the frame of `report(_:)`, which would hold the temporaries of the
    /// building.
    @inline(never)
    private func updateRequest(for location: VehicleLocation, with token: AuthToken) -> TransportRequest {
        TransportRequest(
            method: fleetService.fleet.vehicleUpdateMethod, url: updateURL, headers: headers(authorizedBy: token),
            body: location.updateBody(), timeout: fleetService.timeout)
    }

    /// The update headers with `token`'s `Authorization`, made for each update: a vehicle
    /// keeps no copy of its token's header between updates (over real HTTP, about 440 bytes a
    /// vehicle less; the in-memory doubles pay about 2,800 instructions an update).
    private func headers(authorizedBy token: AuthToken) -> [String: String] {
        var headers = Self.updateHeaders
        AuthorizedCaller<DriverAuthorizationContext>.authorize(&headers, with: token)
        return headers
    }

    /// Every update's headers without authorization, with room for the caller's
    /// `Authorization`: its copy then takes the header without growing and rehashing.
    private static let updateHeaders = {
        var headers = [String: String](minimumCapacity: 2)
        headers["Content-Type"] = "application/json"
        return headers
    }()

    /// Sends one location update, after every earlier one has finished.
    public func report(_ location: VehicleLocation) async throws(FleetServiceError) -> Receipt {
        // The steps throw untyped, which keeps the frames of every update in flight small;
        // the error reaches the app as they threw it (`FleetServiceError.rethrow`).
        do {
            if let problem = location.problem { try implausible(problem) }
            guard await queue.takeTurn() else { try cancelledBeforeTurn() }
            defer { queue.endTurn() }
            // An update cancelled already runs in this task, as then nothing starts for it.
            guard updatesInTasksOfTheirOwn, !Task.isCancelled else { return try await updateInThisTask(location) }
            return try await updateInTaskOfItsOwn(location)
        } catch {
            try FleetServiceError.rethrow(error, scope: context.scope)
        }
    }

    /// The update, token and call, in this task. Without a token, it waits for one (in a task
    /// of its own) before the call's frames exist.
    @inline(never)
    private func updateInThisTask(_ location: VehicleLocation) async throws -> Receipt {
        try await update(location, with: caller.tokenForCall())
    }

    /// The update, token and call, in a task started on the caller's clock, which this waits
    /// for; cancelling the update cancels it. A task keeps the task allocator's slabs its
    /// deepest wait took until it ends, and a call over a network waits at the bottom of the
    /// update's frames: in a simulated vehicle's task, which reports for the fleet's life,
    /// they kept a kilobyte a vehicle that the vehicle's waits between updates never use.
    @inline(never)
    private func updateInTaskOfItsOwn(_ location: VehicleLocation) async throws -> Receipt {
        let reporter = self
        let update = caller.clock.startThrowingTask {
            try await reporter.update(location, with: reporter.caller.tokenForCallInThisTask())
        }
        return try await withTaskCancellationHandler {
            try await update.value
        } onCancel: {
            update.cancel()
        }
    }

    /// Sends `location` with `token`. The request is built here, with the headers that carry
    /// this token: the delivery's frame holds no copy of it.
    @inline(__always)
    private func update(_ location: VehicleLocation, with token: AuthToken) async throws -> Receipt {
        let outcome = try await caller.deliver(
            authorized: updateRequest(for: location, with: token), token: token,
            urlChecked: updateURLCarriesTokens)
        return Receipt(
            status: outcome.status, tokenFingerprint: outcome.tokenFingerprint, attempts: outcome.attempts)
    }
}
