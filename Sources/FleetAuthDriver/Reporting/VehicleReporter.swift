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
    /// Where every update goes, judged once: the vehicle does not change.
    private let updateAddress: UpdateAddress
    /// Whether the update URL may carry a token, judged once: every update goes there.
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
        let updateURL = try fleetService.vehicleURL(context.vehicleID, query: "updateMask=lastLocation")
        self.fleetService = fleetService
        self.context = context
        self.caller = AuthorizedCaller(
            context: context, authorization: authorization, transport: transport, clock: clock)
        // A URL it refuses is refused again at each update, with the caller's message.
        self.updateURLCarriesTokens = (try? caller.checkTransport(updateURL)) != nil
        self.updatesInTasksOfTheirOwn = !(transport is any InProcessTransport)
        self.updateAddress = updatesInTasksOfTheirOwn ? UpdateAddress(textOf: updateURL) : .url(updateURL)
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

    /// The request that sends `location` with `token`, authorized; `nil` if the update URL no
    /// longer reads from its text (see `unreadableUpdateURL()`). Not inlined: every update in
    /// flight holds the frame of `report(_:)`, which would hold the temporaries of the building.
    @inline(never)
    private func updateRequest(for location: VehicleLocation, with token: AuthToken) -> TransportRequest? {
        guard let url = updateAddress.url else { return nil }
        return TransportRequest(
            method: fleetService.fleet.vehicleUpdateMethod, url: url, headers: headers(authorizedBy: token),
            body: location.updateBody(), timeout: fleetService.timeout)
    }

    /// Throws the error of an update URL whose text did not read as the URL again. It cannot
    /// happen (the reporter keeps only a text that read so when it was made, and reading is
    /// deterministic); were it to, the update fails with this error, not a crash.
    @inline(never)
    private func unreadableUpdateURL() throws -> Never {
        throw FleetServiceError(
            fault: .caller,
            message:
                "The reporter could not read its update URL again from its text, as it did when it was made; nothing was sent. This is FleetAuth's fault: please report it.",
            scope: context.scope)
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
    ///
    /// Through a transport other than FleetAuth's in-memory doubles, the update (its token and
    /// its call) runs in a task of its own, which this waits for and cancels with its caller:
    /// a long-lived caller, such as a simulated vehicle's task, then keeps none of the
    /// call's frames between updates. That task inherits the caller's priority and
    /// task-local values; on a simulated clock it prefers the clock's executor (macOS 15,
    /// iOS 18 and later; before them it runs where `Task {}` runs), else it takes no task
    /// executor preference.
    public func report(_ location: VehicleLocation) async throws(FleetServiceError) -> Receipt {
        // The steps throw untyped, which keeps the frames of every update in flight small;
        // the error reaches the app as they threw it (`FleetServiceError.rethrow`).
        do {
            if let problem = location.problem { try implausible(problem) }
            guard await queue.takeTurn() else { try cancelledBeforeTurn() }
            defer { queue.endTurn() }
            // An update cancelled already runs in this task, as then nothing starts for it.
            if updatesInTasksOfTheirOwn, !Task.isCancelled { return try await updateInTaskOfItsOwn(location) }
            // Without a token, the update waits for one before the call's frames exist.
            return try await update(location, with: caller.tokenForCall())
        } catch {
            try FleetServiceError.rethrow(error, scope: context.scope)
        }
    }

    /// The update, token and call, in a task started on the caller's clock, which this waits
    /// for; cancelling the update cancels it. A task keeps the task allocator's slabs its
    /// deepest wait took until it ends, and a call over a network waits at the bottom of the
    /// update's frames: in a simulated vehicle's task, which reports for the fleet's life,
    /// they kept a kilobyte a vehicle that the vehicle's waits between updates never use.
    @inline(never)
    private func updateInTaskOfItsOwn(_ location: VehicleLocation) async throws -> Receipt {
        // As `AuthorizedCaller` waits for a token in a task of its own; not through a generic
        // function the two would share, whose frame took every vehicle's task a slab more.
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
        guard let request = updateRequest(for: location, with: token) else { try unreadableUpdateURL() }
        let outcome = try await caller.deliver(
            authorized: request, token: token, urlChecked: updateURLCarriesTokens)
        return Receipt(
            status: outcome.status, tokenFingerprint: outcome.tokenFingerprint, attempts: outcome.attempts)
    }
}
