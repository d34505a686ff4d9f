public import FleetAuthCore
import FleetAuthFleetService
public import Foundation

/// A fleet service in process that checks every bearer token the way the real one does,
/// and records its calls, so tests can prove that each update carried a valid token for
/// its own vehicle or trip. It keeps the latest 10,000 calls (``calls``) and counts them all
/// (``acceptedCount``, ``rejectedCount``), so a simulator's memory does not grow with
/// simulated time.
///
/// Checks, in order (401 for a bad token, 403 for one that does not cover the path):
/// a `Bearer` JWT is present and decodes; `aud` names the service; `exp` has not passed
/// by the service's clock; `iat` is not further in the future than the skew tolerance;
/// `exp − iat` is at most one hour; the `authorization` claim covers the vehicle or trip
/// in the path (or is `"*"`). Signatures are not verified (in-memory tokens have none);
/// the loopback HTTP fixture verifies real ones.
///
/// Serves the routes FleetAuth's own calls use, as ``/FleetAuthFleetService/FleetServiceEndpoint`` builds them (one
/// table for both): `PUT /v1/providers/{p}/vehicles/{id}` and `PATCH …/deliveryVehicles/{id}`
/// (store the body, answer it; a vehicle must be named under its flavor's claim key),
/// `GET …/trips/{id}` (the trip's state from ``addTrip(_:vehicleID:duration:)``, 404 for
/// trips it was not told of: a consumer test adds its trip first) and
/// `GET …/taskTrackingInfo/{id}`.
public final class InMemoryFleetService: Sendable {
    /// What the service accepts.
    public struct Configuration: Sendable {
        /// The audience tokens must name.
        public var audience: String
        /// The provider (project) ID in paths.
        public var providerID: String
        /// How far in the future `iat` may be. Default 600 s.
        public var skewTolerance: TimeInterval
        /// The longest `exp − iat` accepted. Default 3600 s.
        public var maximumLifetime: TimeInterval

        /// Creates a configuration; the audience matches ``InMemoryTokenBackend``'s default.
        /// - Parameters:
        ///   - audience: The audience tokens must name.
        ///   - providerID: The provider (project) ID in paths.
        ///   - skewTolerance: How far in the future `iat` may be. Default 600 s.
        ///   - maximumLifetime: The longest `exp − iat` accepted. Default 3600 s.
        public init(
            audience: String = TokenRules.fleetServiceAudience, providerID: String = "demo-project",
            skewTolerance: TimeInterval = 600, maximumLifetime: TimeInterval = 3600
        ) {
            self.audience = audience
            self.providerID = providerID
            self.skewTolerance = skewTolerance
            self.maximumLifetime = maximumLifetime
        }
    }

    /// One recorded call.
    public struct Call: Sendable, CustomStringConvertible {
        /// `PUT` or `GET`.
        public let method: String
        /// The vehicle or trip in the path, if the path named one.
        public let scope: AuthorizationScope?
        /// The fingerprint of the bearer token, if one was sent.
        public let tokenFingerprint: String?
        /// The status answered.
        public let status: Int
        /// Why the call was rejected; `nil` when accepted.
        package let rejection: String?
        /// When, by the service's clock.
        package let at: Date

        /// Whether the service accepted the call.
        public var accepted: Bool { rejection == nil && (200...299).contains(status) }

        /// `PUT vehicle v-1 tok_… → 200` or `… → 401 (token expired)`.
        public var description: String {
            let target = scope?.description ?? "?"
            return
                "\(method) \(target) \(tokenFingerprint ?? "no-token") → \(status)\(rejection.map { " (\($0))" } ?? "")"
        }
    }

    private struct Trip {
        let vehicleID: String
        let start: Date
        let duration: TimeInterval
    }

    private struct State {
        var calls = RecentHistory<Call>()
        var accepted = 0
        var trips: [String: Trip] = [:]
        var forcedRejections: [Int] = []
        var revoked: Set<String> = []
        /// What the service keeps of each vehicle or trip it was called for.
        var seen: [AuthorizationScope: Seen] = [:]
    }

    /// What the service keeps of one vehicle or trip: the last token it called with, its
    /// fingerprint and claims (a token carries hundreds of calls, and decoding it, or hashing
    /// it for its fingerprint, at each one took a third of a simulator's time), and the last
    /// update it accepted. One entry for both: each update reads the one and stores the
    /// other, and two tables were two entries an update to read from memory the rest of a
    /// simulated fleet had pushed out of the processor's caches.
    private struct Seen {
        var token: KnownToken?
        var lastUpdate: Data?
    }

    /// A token the service has decoded. The token is kept as part of the header it came in,
    /// not copied: a FleetAuth caller sends its token's one header for every call, so a
    /// simulated fleet's tokens are not held twice. Of its claims it keeps the judgement of
    /// calls on one route, no more, and of an accepted token the name of the resource those
    /// calls serve: a simulated fleet holds one per vehicle, and a token carries hundreds of
    /// calls.
    ///
    /// An object: each call takes its scope's out of the lock, which for a struct of these
    /// fields was a copy and a destruction of each.
    private final class KnownToken: Sendable {
        let token: Substring
        let fingerprint: String
        /// The route the token was judged for (`nil`: a path that names none).
        let route: FleetServiceRoute?
        let judgement: ClaimsJudgement
        /// The name of the resource its calls serve, made once: every accepted update's
        /// answer names it.
        let resourceName: String?

        init(
            token: Substring, fingerprint: String, route: FleetServiceRoute?, judgement: ClaimsJudgement,
            resourceName: String?
        ) {
            (self.token, self.fingerprint, self.route, self.judgement) = (token, fingerprint, route, judgement)
            self.resourceName = resourceName
        }
    }

    /// A status and the reason for a refusal (`nil`: accepted).
    private typealias Verdict = (status: Int, rejection: String?)

    /// What a token's claims say of calls on one route for one scope. Only the time checks
    /// are left for each call: the rest of the claims do not change.
    private enum ClaimsJudgement {
        /// Refused whatever the time: the token does not decode, names another audience or
        /// has no `exp` or `iat` (or there is no route).
        case refused(Verdict)
        /// Judged by the time checks, then by `then`: the lifetime and the coverage, which
        /// the service checks after the time (`nil`: accepted).
        case timed(issuedAt: Date, expiresAt: Date, then: Verdict?)

        /// Whether calls may be accepted, depending on the time.
        var isTimed: Bool {
            if case .timed = self { return true }
            return false
        }
    }

    private let clock: any WallClock
    /// The rules in force, as the service was made with them.
    public let configuration: Configuration
    private let state = LockedState(State())

    /// Creates a service reading time from `clock`.
    public init(clock: any WallClock = SystemWallClock(), configuration: Configuration = Configuration()) {
        self.clock = clock
        self.configuration = configuration
    }

    /// The calls so far, in order, up to the latest 10,000: every call of a test, the last
    /// steps of a simulator.
    ///
    /// - Important: Count with ``acceptedCount`` and ``rejectedCount``: past 10,000 calls,
    ///   `calls.count` stays at 10,000.
    public var calls: [Call] { state.withLock { $0.calls.elements } }
    /// How many calls the service accepted, including those ``calls`` no longer keeps: a
    /// simulator's tally.
    public var acceptedCount: Int { state.withLock { $0.accepted } }
    /// How many calls the service rejected, including those ``calls`` no longer keeps.
    public var rejectedCount: Int { state.withLock { $0.calls.total - $0.accepted } }

    /// The body of the last accepted update of `vehicleID`.
    public func lastUpdate(of vehicleID: String) -> Data? {
        state.withLock { $0.seen[.vehicle(vehicleID)]?.lastUpdate }
    }

    /// Registers a trip served by `vehicleID`, starting now and lasting `duration` seconds;
    /// its status moves from `NEW` through pickup and drop-off to `COMPLETE`.
    public func addTrip(_ tripID: String, vehicleID: String, duration: TimeInterval = 1800) {
        let trip = Trip(vehicleID: vehicleID, start: clock.now(), duration: duration)
        state.withLock { $0.trips[tripID] = trip }
    }

    /// Answers the next calls with these statuses (401 or 403, say) whatever their
    /// token, as after a key rotation; each status is used once.
    public func rejectNext(_ statuses: [Int]) {
        state.withLock { $0.forcedRejections.append(contentsOf: statuses) }
    }

    /// Answers 401 to every call that carries the token with this fingerprint, as after
    /// the token was revoked.
    public func revoke(tokenFingerprint: String) {
        state.withLock { _ = $0.revoked.insert(tokenFingerprint) }
    }

    /// Checks the token and serves the call.
    public func respond(to request: TransportRequest) async -> TransportResponse {
        respond(to: request, path: request.url.routingPath)
    }

    /// Checks the token and serves the call whose URL has `path`: the form of the in-memory
    /// transport, which has read the path already.
    package func respond(to request: TransportRequest, path: String) -> TransportResponse {
        let now = clock.now()
        let match = FleetServiceRoute.match(path: path, providerID: configuration.providerID)
        let scope = match.map { $0.route.scope(id: $0.id) }
        let bearer = request.header("Authorization").flatMap(Self.bearerToken)
        let (forced, revoked, known) = state.withLock { state in
            (
                state.forcedRejections.isEmpty ? nil : state.forcedRejections.removeFirst(), state.revoked,
                scope.flatMap { state.seen[$0]?.token }.flatMap { known in
                    bearer == known.token && known.route == match?.route ? known : nil
                }
            )
        }
        let token = bearer.map { bearer in known ?? decoded(bearer, for: scope, on: match?.route) }
        let verdict: Verdict
        if let forced {
            verdict = (forced, "rejected on purpose")
        } else if let token, revoked.contains(token.fingerprint) {
            verdict = (401, "token revoked")
        } else if let scope, (try? scope.validated()) == nil {
            verdict = (400, "the ID breaks the fleet service's ID rules")
        } else if match != nil {
            verdict = check(token, at: now)
        } else {
            verdict = (404, "no such resource")
        }
        var status = verdict.status
        let body: Data
        var stored: Data?
        if let rejection = verdict.rejection {
            body = Data(#"{"error":"\#(rejection)"}"#.utf8)
        } else if let scope, let route = match?.route {
            // A token judged by time only reaches here; the name is made again for safety.
            let name =
                token?.resourceName
                ?? Self.resourceName(providerID: configuration.providerID, route: route, id: scope.id)
            (status, body, stored) = serve(request, scope: scope, route: route, name: name, now: now)
        } else {
            body = Data(#"{"error":""}"#.utf8)
        }
        let call = Call(
            method: request.method, scope: scope, tokenFingerprint: token?.fingerprint, status: status,
            rejection: verdict.rejection ?? ((200...299).contains(status) ? nil : "HTTP \(status)"), at: now)
        state.withLock { state in
            if let stored, let scope { state.seen[scope, default: Seen()].lastUpdate = stored }
            state.calls.append(call)
            if call.accepted { state.accepted += 1 }
        }
        return TransportResponse(status: status, headers: Self.jsonHeaders, body: body, url: request.url)
    }

    /// Every answer's headers, one dictionary shared by all.
    private static let jsonHeaders = ["Content-Type": "application/json"]

    /// `bearer` decoded and judged for calls of `scope` on `route`, and remembered as the
    /// last token of `scope`.
    private func decoded(_ bearer: Substring, for scope: AuthorizationScope?, on route: FleetServiceRoute?)
        -> KnownToken
    {
        let claims = try? JWTDecoder.decode(String(bearer))
        let judgement: ClaimsJudgement =
            if let scope, let route { judge(claims, covering: scope, on: route) } else {
                .refused((404, "no such resource"))
            }
        let known = KnownToken(
            token: bearer, fingerprint: AuthToken.fingerprint(ofPart: bearer), route: route, judgement: judgement,
            resourceName: judgement.isTimed
                ? scope.flatMap { scope in
                    route.map { Self.resourceName(providerID: configuration.providerID, route: $0, id: scope.id) }
                } : nil)
        if let scope { state.withLock { $0.seen[scope, default: Seen()].token = known } }
        return known
    }

    /// What `claims` say of calls of `scope` on `route`, the time checks left for each call.
    private func judge(_ claims: JWTClaims?, covering scope: AuthorizationScope, on route: FleetServiceRoute)
        -> ClaimsJudgement
    {
        guard let claims else { return .refused((401, "malformed token")) }
        guard claims.audience.contains(configuration.audience) else { return .refused((401, "wrong audience")) }
        guard let exp = claims.expiresAt, let iat = claims.issuedAt else {
            return .refused((401, "missing exp or iat"))
        }
        return .timed(
            issuedAt: iat, expiresAt: exp, then: coverage(of: claims, issuedAt: iat, expiresAt: exp, scope, route))
    }

    /// The checks after the time's: the lifetime, then whether the claims cover `scope`
    /// and, for a vehicle, name it under `route`'s claim key.
    private func coverage(
        of claims: JWTClaims, issuedAt iat: Date, expiresAt exp: Date, _ scope: AuthorizationScope,
        _ route: FleetServiceRoute
    ) -> Verdict? {
        guard exp.timeIntervalSince(iat) <= configuration.maximumLifetime else {
            return (401, "lifetime over one hour")
        }
        guard claims.covers(scope) else { return (403, "token does not cover \(scope)") }
        // Each flavor's vehicles are named by their own claim key.
        if route.kind == .vehicle {
            let named = claims.authorization.first { $0.key.lowercased() == route.claimKey }?.value ?? []
            guard named.contains(scope.id) || named.contains(JWTClaims.wildcard) else {
                return (403, "token does not name \(scope) as \(route.claimKey)")
            }
        }
        return nil
    }

    /// The verdict on a call with `token` at `now`: its judgement, then the time checks.
    private func check(_ token: KnownToken?, at now: Date) -> Verdict {
        guard let token else { return (401, "no bearer token") }
        switch token.judgement {
        case .refused(let verdict): return verdict
        case .timed(let iat, let exp, let then):
            guard exp > now else { return (401, "token expired") }
            guard iat.timeIntervalSince(now) <= configuration.skewTolerance else {
                return (401, "token issued in the future")
            }
            return then ?? (200, nil)
        }
    }

    /// The status and body of an accepted call to the resource `name`, and the update to
    /// store as the vehicle's last.
    private func serve(
        _ request: TransportRequest, scope: AuthorizationScope, route: FleetServiceRoute, name: String, now: Date
    ) -> (Int, Data, stored: Data?) {
        guard request.method == route.method else {
            return (405, Data(#"{"error":"use \#(route.method)"}"#.utf8), nil)
        }
        if route.kind == .vehicle {
            guard let body = request.body, let answer = Self.naming(body, name) else {
                return (400, Data(#"{"error":"expected a JSON vehicle update"}"#.utf8), nil)
            }
            return (200, answer, body)
        }
        if route.kind == .tracking {
            let object = JSONText.object([
                ("name", .string(name)), ("trackingId", .string(scope.id)), ("state", .string("OPEN")),
            ])
            return (200, Data(object), nil)
        }
        guard let trip = state.withLock({ $0.trips[scope.id] }) else {
            return (404, Data(#"{"error":"unknown trip"}"#.utf8), nil)
        }
        let progress = min(1, max(0, now.timeIntervalSince(trip.start) / trip.duration))
        let status =
            switch progress {
            case ..<0.05: "NEW"
            case ..<0.35: "ENROUTE_TO_PICKUP"
            case ..<0.4: "ARRIVED_AT_PICKUP"
            case ..<1: "ENROUTE_TO_DROPOFF"
            default: "COMPLETE"
            }
        let object = JSONText.object([
            ("name", .string(name)), ("vehicleId", .string(trip.vehicleID)), ("tripStatus", .string(status)),
            ("remainingDistanceMeters", .integer(Int64((1 - progress) * 12_000))),
        ])
        return (200, Data(object), nil)
    }

    /// `providers/{providerID}/{collection}/{id}`, in one allocation and with each part copied
    /// at once (appending the parts to a string took about 3,000 instructions); a known
    /// token keeps its scope's.
    private static func resourceName(providerID: String, route: FleetServiceRoute, id: String) -> String {
        let parts = ("providers/", providerID, "/", route.collection, "/", id)
        // `providers/` and the two slashes are 12 bytes.
        let count = 12 + providerID.utf8.count + route.collection.utf8.count + id.utf8.count
        return String(unsafeUninitializedCapacity: count) { name in
            var end = 0
            func put(_ part: String) {
                end = UnsafeMutableBufferPointer(rebasing: name[end...]).initialize(fromContentsOf: part.utf8) + end
            }
            put(parts.0)
            put(parts.1)
            put(parts.2)
            put(parts.3)
            put(parts.4)
            put(parts.5)
            return end
        }
    }

    /// The token of `Bearer <token>` (the scheme in any case). By bytes: splitting the header
    /// by `Character` walked a long token's graphemes at every call.
    private static func bearerToken(_ header: String) -> Substring? {
        let starts =
            header.utf8.withContiguousStorageIfAvailable(startsWithBearer)
            ?? Array(header.utf8).withUnsafeBufferPointer(startsWithBearer)
        return starts ? header[header.utf8.index(header.startIndex, offsetBy: 7)...] : nil
    }

    /// Whether `bytes` are `bearer` in any case, a space and at least one byte more.
    private static func startsWithBearer(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count > 7, bytes[6] == UInt8(ascii: " ") else { return false }
        let scheme: StaticString = "bearer"
        return scheme.withUTF8Buffer { scheme in (0..<6).allSatisfy { bytes[$0] | 0x20 == scheme[$0] } }
    }
}

extension InMemoryTransport {
    /// Answers every `/v1/…` request with the fleet service.
    public func mount(_ service: InMemoryFleetService) {
        route(prefix: "/v1/", pathHandler: { request, path in service.respond(to: request, path: path) })
    }
}
