package import FleetAuthCore
package import Foundation

/// Checks a token backend the way the SDK will use it, and explains every problem.
///
/// It builds the request with the SDK's ``TokenEndpoint``, sends it through the given
/// transport (the SDK's `URLSessionTransport` from the command line), reads the answer
/// with the SDK's response formats, and then judges each part on its own so that one run
/// reports every problem, not just the first.
package struct EndpointChecker: Sendable {
    /// What to check.
    package struct Options: Sendable {
        /// The endpoint URL (`{id}` placeholders allowed).
        package var url: String
        /// The vehicle or trip to ask a token for.
        package var scope: AuthorizationScope
        /// Extra request headers, such as the app's credential. Values are never printed.
        package var headers: [String: String]
        /// The response format; `nil` tries every preset.
        package var format: TokenResponseFormat?
        /// Accept a wildcard `authorization` claim with a warning instead of a failure.
        package var allowWildcard: Bool
        /// The audience tokens must name; `nil` skips the check. Default: the fleet
        /// service's, as the SDK's.
        package var audience: String?
        /// `POST` instead of `GET`.
        package var method: String
        /// Seconds the request may take: bounds the whole exchange on the checker's clock,
        /// as the SDK bounds each attempt.
        package var timeout: TimeInterval
        /// The fleet flavor whose claim key must name the vehicle, as the SDK's rules; `nil`
        /// (no `--fleet`) takes the one the token's claim key names, and says so.
        package var fleet: FleetFlavor?
        /// Plain `http` to a host other than loopback, as the SDK's `allowsInsecureHTTP`.
        package var allowsInsecureHTTP = false
        /// The retries the exchange makes, as the SDK's (default); its deadline becomes
        /// ``timeout``, so that bounds the whole exchange.
        package var retry = RetryPolicy()

        /// Creates options.
        package init(
            url: String, scope: AuthorizationScope, headers: [String: String] = [:], format: TokenResponseFormat? = nil,
            allowWildcard: Bool = false, audience: String? = TokenRules.fleetServiceAudience,
            method: String = "GET", timeout: TimeInterval = 15, fleet: FleetFlavor? = nil
        ) {
            self.fleet = fleet
            self.audience = audience
            self.url = url
            self.scope = scope
            self.headers = headers
            self.format = format
            self.allowWildcard = allowWildcard
            self.method = method
            self.timeout = timeout
        }
    }

    /// The fleet service's limits: the SDK's own defaults, so both judge alike.
    static let maximumLifetime: TimeInterval = RefreshPolicy().maximumLifetime
    static let minimumRemainingLife: TimeInterval = RefreshPolicy().minimumRemainingLifetime

    /// Why the SDK would refuse a token of `lifetime` with `remaining` seconds left as too
    /// short, by the SDK's own policy (its margin is a quarter of a short lifetime); `nil`
    /// when it would take it.
    static func shortLifeRefusal(lifetime: TimeInterval, remaining: TimeInterval) -> String? {
        let policy = RefreshPolicy()
        guard !policy.acceptsShortLife(lifetime: lifetime, remaining: remaining) else { return nil }
        if lifetime < policy.minimumLifetime {
            return "\(Int(lifetime)) s lifetime, under the \(Int(policy.minimumLifetime)) s the SDK accepts"
        }
        let margin = policy.minimumRemaining(forLifetime: lifetime)
        return "\(Int(remaining)) s left, not over the SDK's \(Int(margin)) s margin"
    }

    /// The audience and wildcard rules the SDK would apply with these options (the fleet:
    /// `--fleet`, else on-demand until a token names its own; see ``rules(for:)``).
    var rules: TokenRules {
        TokenRules(
            expectedAudience: options.audience, allowsWildcard: options.allowWildcard,
            fleet: options.fleet ?? .onDemand)
    }
    static let bodyCap = 64 * 1024

    /// What to check.
    package let options: Options
    let transport: any HTTPTransport
    let clock: any WallClock

    /// Creates a checker that sends through `transport` and compares times with `clock`.
    package init(options: Options, transport: any HTTPTransport, clock: any WallClock = SystemWallClock()) {
        self.options = options
        self.transport = transport
        self.clock = clock
    }

    /// Runs every check that applies and returns the report.
    package func run() async -> EndpointReport {
        var findings: [Finding] = []
        var requested: URL?
        var format: TokenResponseFormat?
        let token = await check(into: &findings, requested: &requested, format: &format)
        let claims = token.flatMap { try? JWTDecoder.decode($0) }
        let fleet = claims.map { self.fleet(for: $0).flavor } ?? options.fleet ?? .onDemand
        return EndpointReport(
            url: requested.map { Self.display($0, scope: options.scope) } ?? options.url, scope: options.scope,
            findings: findings, tokenFingerprint: token.map(AuthToken.fingerprint(of:)),
            formatFlags: format.map { $0.spelling.flags }, formatSwift: format.map { $0.spelling.swift },
            swiftProvider: format.map { swiftSnippet(format: $0, fleet: fleet) })
    }

    /// The URL as requested, without user info and with the values of query items other
    /// than the IDs hidden: they may be keys.
    static func display(_ url: URL, scope: AuthorizationScope) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "?" }
        components.user = nil
        components.password = nil
        components.queryItems = components.queryItems?.map { item in
            [scope.kind.queryItemName, "taskId"].contains(item.name)
                ? item : URLQueryItem(name: item.name, value: "hidden")
        }
        return components.string ?? "?"
    }

    /// Sends the request through the SDK's own fetch path (its request, per-attempt
    /// timeout, retries of transient failures with backoff and `Retry-After`), with the
    /// whole exchange bounded by the `--timeout`; reports retries as what happened.
    private func exchange(with endpoint: TokenEndpoint, into findings: inout [Finding]) async -> TransportResponse? {
        var endpoint = endpoint
        let headers = options.headers
        endpoint.headers = { _ in headers }
        endpoint.maximumResponseBytes = Int.max
        let failed = LockedState<[FleetAuthError]>([])
        var retry = options.retry
        retry.deadline = options.timeout
        let fetcher = TokenFetcher(
            endpoint: endpoint, transport: transport, clock: clock, refresh: RefreshPolicy(), retry: retry,
            rules: rules,
            emit: { event in
                switch event {
                case .fetchFailed(_, let error, _, _), .notSent(_, let error, _): failed.withLock { $0.append(error) }
                default: break
                }
            })
        let result = await fetcher.exchange(options.scope)
        let tried = failed.withLock { $0 }.map(Self.outcome(of:))
        switch result {
        case .success(let response):
            if !tried.isEmpty {
                findings.append(
                    Finding(
                        "retries", .warning,
                        "\(tried.joined(separator: ", then ")), then HTTP \(response.status) on attempt \(tried.count + 1): the SDK retries this",
                        fix: "answer at the first attempt: each retry delays a driver's first location update"))
            }
            return response
        case .failure(let error):
            findings.append(
                Self.finding(
                    for: error, attempts: tried, timeout: options.timeout,
                    stoppedByTimeout: tried.count < retry.maximumAttempts))
            return nil
        }
    }

    /// `HTTP 503`, `timed out` or `connection refused`: what one failed attempt met.
    private static func outcome(of error: FleetAuthError) -> String {
        if let status = error.status { return "HTTP \(status)" }
        if error.reason == .timedOut { return "no answer in time" }
        return error.underlyingError.map(TransportFailureReason.describe) ?? "\(error.reason)"
    }

    /// The finding for an exchange that ended without an answer to judge.
    /// `stoppedByTimeout`: the SDK would have retried, but `--timeout` left no time to.
    private static func finding(
        for error: FleetAuthError, attempts: [String], timeout: TimeInterval, stoppedByTimeout: Bool
    ) -> Finding {
        let every = attempts.count > 1 ? " on each of \(attempts.count) attempts" : ""
        let seconds = String(format: "%.0f", timeout)
        switch error.reason {
        case .responseTooLarge:
            return Finding(
                "body-size", .failure, error.message,
                fix: "return only the token and its expiry (the SDK caps token bodies at \(bodyCap) bytes)")
        case .timedOut:
            return Finding(
                "request", .failure, "no answer within \(String(format: "%.1f", timeout)) s\(every)",
                fix: "the SDK gives up after its timeout too: make the endpoint answer faster, or raise --timeout")
        case .unexpectedStatus where error.isTransient && stoppedByTimeout:
            let asked = error.retryAfter.flatMap {
                $0 > 0 ? String(format: " (Retry-After asked for %.0f s)", $0) : nil
            }
            return Finding(
                "status", .failure,
                "HTTP \(error.status ?? 0)\(every), and no time left within \(seconds) s for another attempt\(asked ?? "")",
                fix:
                    "the SDK retries this status while time is left: make the endpoint answer 200 at once, or raise --timeout to see whether a retry succeeds (\(error.message))"
            )
        case .unexpectedStatus:
            return Finding(
                "status", .failure, "HTTP \(error.status ?? 0)\(every) within \(seconds) s",
                fix:
                    "the SDK retries this status and then fails: the endpoint must answer 200 with a token (\(error.message))"
            )
        case .insecureEndpoint:
            return Finding(
                "request", .failure, error.message,
                fix: "the SDK refuses this connection too, at once and without retrying: mend it as the line above says"
            )
        case .invalidConfiguration:
            return Finding(
                "request", .failure, error.message,
                fix:
                    "the SDK refuses to send this request too: mend the header given with --header (in the app, the TokenEndpoint's headers closure) as the line above says"
            )
        default:
            return Finding(
                "request", .failure,
                "no answer (\(error.underlyingError.map(TransportFailureReason.describe) ?? error.message))\(every)",
                fix: "check that the server is up and reachable from this machine, and the host and port")
        }
    }

    /// The fix of a URL whose placeholder names another kind of ID than the one asked for: the
    /// flag that asks for that kind, or the placeholders of the kind asked for.
    private func placeholderFix() -> String {
        let own = "use \(URLTemplate.placeholderList(for: [options.scope.kind])) for a \(options.scope.kind) ID"
        let flags: [AuthorizationScope.Kind: String] = [
            .vehicle: "--vehicle-id", .trip: "--trip-id", .tracking: "--tracking-id",
        ]
        guard let named = (try? URLTemplate(options.url))?.namedKinds.first(where: { $0 != options.scope.kind }),
            let flag = flags[named]
        else { return own }
        return "pass \(flag) to check a URL of \(named) tokens, or \(own)"
    }

    /// Appends findings; returns the token value if one was extracted.
    private func check(
        into findings: inout [Finding], requested: inout URL?, format matched: inout TokenResponseFormat?
    )
        async -> String?
    {
        // The SDK's own endpoint: the same template placeholders and query items.
        let endpoint = TokenEndpoint(
            url: options.url, method: options.method, format: options.format ?? .tokenOnly, timeout: options.timeout,
            allowsInsecureHTTP: options.allowsInsecureHTTP)
        let request: TransportRequest
        do {
            try endpoint.validate(for: [options.scope.kind])
            request = try endpoint.baseRequest(for: options.scope.validated())
            requested = request.url
        } catch {
            let insecure = error.reason == .insecureEndpoint
            findings.append(
                Finding(
                    "transport", .failure, insecure ? "plain http to a host other than loopback" : error.message,
                    fix: insecure
                        ? "serve the endpoint over https: the app's credential and the token would cross the network in clear text; for a trusted test network only, pass --allow-insecure-http (Swift: allowsInsecureHTTP: true)"
                        : error.reason == .invalidConfiguration && error.message.contains("before its path")
                            ? "write the host in full, and put the placeholder in the path or the query: https://api.example.com/token/{vehicleId}"
                            : error.reason == .invalidConfiguration && error.message.contains("placeholder")
                                ? placeholderFix()
                                : "pass an absolute https URL"))
            return nil
        }
        let scheme = request.url.scheme ?? "?"
        let host = request.url.host ?? "?"
        if case .clearText = TokenCarryingURL.judge(scheme: scheme, host: request.url.host, allowsInsecureHTTP: false) {
            findings.append(
                Finding(
                    "transport", .warning, "clear-text http to \(host), allowed by --allow-insecure-http",
                    fix: "for a trusted test network only: the app must use https in production"))
        } else {
            findings.append(Finding("transport", .ok, scheme == "https" ? "https" : "http to loopback (\(host))"))
        }
        guard let response = await exchange(with: endpoint, into: &findings) else { return nil }
        guard checkStatus(response, request: request, into: &findings) else { return nil }
        checkContentType(response, into: &findings)
        findings.append(Self.dateFinding(response))
        guard checkBodySize(response, into: &findings) else { return nil }
        if let page = Self.webPageFinding(response) {
            findings.append(page)
            return nil
        }
        guard let (token, format, bodyExpiry) = checkShape(response, into: &findings) else { return nil }
        matched = format
        checkOtherExpiryFields(response, format: format, token: token, into: &findings)
        guard let claims = checkJWT(token, into: &findings) else { return token }
        checkHeader(claims, into: &findings)
        checkIdentity(claims, into: &findings)
        let serverNow = TokenResponseParser.serverDate(response) ?? clock.now()
        checkExpiryAgreement(
            format: format, bodyExpiry: bodyExpiry, claims: claims, serverNow: serverNow, into: &findings)
        checkLifetime(claims, serverNow: serverNow, into: &findings)
        checkAuthorization(claims, into: &findings)
        checkClock(claims, serverDate: TokenResponseParser.serverDate(response), into: &findings)
        return token
    }
}
