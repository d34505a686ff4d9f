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
        /// `POST` instead of `GET`.
        package var method: TransportRequest.Method
        /// Seconds the request may take.
        package var timeout: TimeInterval

        /// Creates options.
        package init(
            url: String, scope: AuthorizationScope, headers: [String: String] = [:], format: TokenResponseFormat? = nil,
            allowWildcard: Bool = false, method: TransportRequest.Method = .get, timeout: TimeInterval = 15
        ) {
            self.url = url
            self.scope = scope
            self.headers = headers
            self.format = format
            self.allowWildcard = allowWildcard
            self.method = method
            self.timeout = timeout
        }
    }

    /// The fleet service's limits, as the checks apply them.
    static let maximumLifetime: TimeInterval = 3600
    static let minimumRemainingLife: TimeInterval = 300
    static let clockSkewTolerance: TimeInterval = 600
    static let bodyCap = 64 * 1024

    /// What to check.
    package let options: Options
    private let transport: any HTTPTransport
    private let clock: any WallClock

    /// Creates a checker that sends through `transport` and compares times with `clock`.
    package init(options: Options, transport: any HTTPTransport, clock: any WallClock = SystemWallClock()) {
        self.options = options
        self.transport = transport
        self.clock = clock
    }

    /// Runs every check that applies and returns the report.
    package func run() async -> EndpointReport {
        var findings: [Finding] = []
        let token = await check(into: &findings)
        return EndpointReport(
            url: displayURL, scope: options.scope, findings: findings,
            tokenFingerprint: token.map(AuthToken.fingerprint(of:)))
    }

    private var displayURL: String {
        guard var components = URLComponents(string: options.url) else { return options.url }
        components.query = nil
        components.user = nil
        components.password = nil
        return components.string ?? options.url
    }

    /// Appends findings; returns the token value if one was extracted.
    private func check(into findings: inout [Finding]) async -> String? {
        let endpoint = TokenEndpoint(
            url: options.url, method: options.method,
            idPlacement: options.url.contains("{id}") ? .pathTemplate : .queryItems,
            format: options.format ?? .tokenOnly, timeout: options.timeout)
        let request: TransportRequest
        do {
            request = try endpoint.baseRequest(for: options.scope.validated())
        } catch {
            let insecure = error.code == .insecureEndpoint
            findings.append(
                Finding(
                    "transport", .failure, insecure ? "plain http to a host other than loopback" : error.message,
                    fix: insecure
                        ? "serve the endpoint over https: the app's credential and the token would cross the network in clear text"
                        : "pass an absolute https URL"))
            return nil
        }
        let scheme = request.url.scheme ?? "?"
        findings.append(
            Finding("transport", .ok, scheme == "https" ? "https" : "http to loopback (\(request.url.host ?? "?"))"))
        var headed = request
        for (name, value) in options.headers { headed.headers[name] = value }

        let response: TransportResponse
        do {
            response = try await transport.send(headed)
        } catch {
            findings.append(
                Finding(
                    "request", .failure,
                    "no answer: \((error as? FleetAuthError)?.message ?? (error as NSError).localizedDescription)",
                    fix: "check that the server is up and reachable from this machine"))
            return nil
        }
        guard checkStatus(response, request: request, into: &findings) else { return nil }
        checkContentType(response, into: &findings)
        findings.append(
            TokenResponseParser.serverDate(response) == nil
                ? Finding(
                    "date-header", .warning, "missing or unreadable",
                    fix:
                        "send a Date header: without one the SDK takes iat as the server's time and cannot tell an old token"
                )
                : Finding("date-header", .ok, response.header("Date") ?? ""))
        guard checkBodySize(response, into: &findings) else { return nil }
        guard let (token, format, bodyExpiry) = checkShape(response, into: &findings) else { return nil }
        guard let claims = checkJWT(token, into: &findings) else { return token }
        checkHeader(claims, into: &findings)
        checkIdentity(claims, into: &findings)
        let serverNow = TokenResponseParser.serverDate(response) ?? clock.now()
        checkExpiryAgreement(
            format: format, bodyExpiry: bodyExpiry, claims: claims, serverNow: serverNow, into: &findings)
        checkLifetime(claims, serverNow: serverNow, into: &findings)
        checkAuthorization(claims, into: &findings)
        checkClock(claims, into: &findings)
        return token
    }

    private func checkStatus(_ response: TransportResponse, request: TransportRequest, into findings: inout [Finding])
        -> Bool
    {
        if (300...399).contains(response.status) {
            let location = response.header("Location") ?? ""
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL
            let sameHost = target?.host?.lowercased() == request.url.host?.lowercased()
            findings.append(
                sameHost
                    ? Finding(
                        "redirect", .warning, "HTTP \(response.status) to \(target?.path ?? location) on the same host",
                        fix: "point the SDK at the final URL: token requests do not follow redirects")
                    : Finding(
                        "redirect", .failure, "HTTP \(response.status) to another host (\(target?.host ?? "unknown"))",
                        fix: "never redirect token requests off-host: the app's credential would travel there"))
            return false
        }
        guard (200...299).contains(response.status) else {
            findings.append(
                Finding(
                    "status", .failure, "HTTP \(response.status)",
                    fix: response.status == 401 || response.status == 403
                        ? "send the app's credential with --header 'Authorization: …'"
                        : "the endpoint must answer 200 with a token"))
            return false
        }
        findings.append(Finding("status", .ok, "HTTP \(response.status)"))
        return true
    }

    private func checkContentType(_ response: TransportResponse, into findings: inout [Finding]) {
        let type = response.header("Content-Type")?.split(separator: ";").first.map {
            String(String($0).trimmingWhitespace()).lowercased()
        }
        guard let type else {
            findings.append(Finding("content-type", .warning, "none", fix: "send Content-Type: application/json"))
            return
        }
        let expected = ["application/json", "application/jwt", "text/plain"]
        findings.append(
            expected.contains(type)
                ? Finding("content-type", .ok, type)
                : Finding(
                    "content-type", .warning, type, fix: "send application/json (or application/jwt for a bare token)"))
    }

    private func checkBodySize(_ response: TransportResponse, into findings: inout [Finding]) -> Bool {
        let size = response.body.count
        if size > Self.bodyCap {
            findings.append(
                Finding(
                    "body-size", .failure, "\(size) bytes",
                    fix: "return only the token and its expiry (the SDK caps bodies at \(Self.bodyCap) bytes)"))
            return false
        }
        findings.append(
            size > 16 * 1024
                ? Finding("body-size", .warning, "\(size) bytes", fix: "return only the token and its expiry")
                : Finding("body-size", .ok, "\(size) bytes"))
        return true
    }

    /// Finds the format the body matches: the one given, or among the presets that read
    /// it the one whose expiry agrees with the JWT (presets can share keys but not units).
    private func checkShape(_ response: TransportResponse, into findings: inout [Finding])
        -> (String, TokenResponseFormat, Double?)?
    {
        let looksLikeJSON = response.body.first == UInt8(ascii: "{")
        let candidates =
            options.format.map { [$0] }
            ?? Self.presetsMostSpecificFirst.filter { !(looksLikeJSON && $0 == .plainText) }
        var firstError: FleetAuthError?
        var matches: [(String, TokenResponseFormat, Double?)] = []
        for format in candidates {
            do {
                let (token, expiry) = try TokenResponseParser(format: format).extract(response)
                matches.append((token, format, expiry))
            } catch {
                firstError = firstError ?? error
            }
        }
        let serverNow = TokenResponseParser.serverDate(response) ?? clock.now()
        // A body that states an expiry is read by a preset that reads it, never by one
        // that would ignore it and hide a unit mix-up.
        let withExpiry = matches.filter { $0.2 != nil }
        if !withExpiry.isEmpty { matches = withExpiry }
        let agreeing = matches.first { token, format, expiry in
            guard let expiry, let exp = try? JWTDecoder.decode(token).expiresAt else { return true }
            return (try? TokenResponseParser(format: format).check(expiry, against: exp, serverNow: serverNow)) != nil
        }
        guard let match = agreeing ?? matches.first else {
            findings.append(
                Finding(
                    "shape", .failure,
                    options.format == nil
                        ? "matches no preset (\(firstError?.message ?? "unreadable"))"
                        : firstError?.message ?? "unreadable",
                    fix: "answer {\"token\": \"<jwt>\"} or another documented shape, or pass --format"))
            return nil
        }
        let unit = Self.expiryUnit(of: match.1).map { ", expiry in \($0)" } ?? ", expiry from the JWT's exp"
        findings.append(Finding("shape", .ok, "matches \(match.1)\(unit)"))
        return match
    }

    /// Presets with an expiry key first, so a body with one is read with it.
    static let presetsMostSpecificFirst: [TokenResponseFormat] =
        TokenResponseFormat.presets.filter { expiryUnit(of: $0) != nil }
        + TokenResponseFormat.presets.filter { expiryUnit(of: $0) == nil }

    static func expiryUnit(of format: TokenResponseFormat) -> TokenResponseFormat.ExpiryUnit? {
        if case .json(_, let field?) = format.body { return field.unit }
        return nil
    }

    private func checkJWT(_ token: String, into findings: inout [Finding]) -> JWTClaims? {
        do {
            let claims = try JWTDecoder.decode(token)
            findings.append(Finding("jwt", .ok, "compact JWT, \(token.utf8.count) bytes"))
            return claims
        } catch {
            findings.append(Finding("jwt", .failure, error.message, fix: "return the signed JWT the backend minted"))
            return nil
        }
    }

    private func checkHeader(_ claims: JWTClaims, into findings: inout [Finding]) {
        let alg = claims.algorithm ?? "none"
        switch alg {
        case "RS256": findings.append(Finding("header.alg", .ok, "RS256"))
        case "none", "":
            findings.append(Finding("header.alg", .failure, "unsigned (alg \(alg))", fix: "sign tokens with RS256"))
        default:
            findings.append(Finding("header.alg", .warning, alg, fix: "the fleet service expects RS256 signatures"))
        }
        findings.append(
            claims.keyID.map { Finding("header.kid", .ok, $0) }
                ?? Finding("header.kid", .warning, "missing", fix: "set kid to the signing key's ID"))
    }

    private func checkIdentity(_ claims: JWTClaims, into findings: inout [Finding]) {
        findings.append(
            claims.audience.isEmpty
                ? Finding("aud", .failure, "missing", fix: "set aud to the fleet service's audience")
                : Finding("aud", .ok, claims.audience.joined(separator: ", ")))
        switch (claims.issuer, claims.subject) {
        case (let iss?, let sub?) where iss == sub: findings.append(Finding("iss/sub", .ok, iss))
        case (let iss?, let sub?):
            findings.append(
                Finding("iss/sub", .warning, "iss \(iss), sub \(sub)", fix: "both should name the service account"))
        default:
            findings.append(
                Finding("iss/sub", .warning, "missing", fix: "set iss and sub to the service account's email"))
        }
    }

    private func checkExpiryAgreement(
        format: TokenResponseFormat, bodyExpiry: Double?, claims: JWTClaims, serverNow: Date,
        into findings: inout [Finding]
    ) {
        guard let bodyExpiry, let exp = claims.expiresAt, let unit = Self.expiryUnit(of: format) else { return }
        do {
            try TokenResponseParser(format: format).check(bodyExpiry, against: exp, serverNow: serverNow)
            findings.append(Finding("expiry-agreement", .ok, "the body's expiry (\(unit)) agrees with the JWT's exp"))
        } catch {
            findings.append(
                Finding(
                    "expiry-agreement", .failure, error.message, fix: "send the expiry in the unit the format names"))
        }
    }

    private func checkLifetime(_ claims: JWTClaims, serverNow: Date, into findings: inout [Finding]) {
        guard let exp = claims.expiresAt else {
            findings.append(Finding("lifetime", .failure, "no exp claim", fix: "set exp, at most one hour after iat"))
            return
        }
        let remaining = exp.timeIntervalSince(serverNow)
        if let lifetime = claims.issuedLifetime, lifetime > Self.maximumLifetime {
            findings.append(
                Finding(
                    "lifetime", .failure, "\(Int(lifetime)) s (exp − iat)",
                    fix: "at most 3600 s: the fleet service rejects longer tokens"))
        } else if remaining <= 0 {
            findings.append(
                Finding(
                    "lifetime", .failure, "already expired \(Int(-remaining)) s ago",
                    fix: "mint a new token per request"))
        } else if remaining <= Self.minimumRemainingLife {
            findings.append(
                Finding(
                    "lifetime", .failure, "\(Int(remaining)) s left, too short to keep 5 minutes of life",
                    fix: "mint tokens that live well over 5 minutes (an hour is usual)"))
        } else {
            let issued = claims.issuedLifetime.map { "\(Int($0)) s lifetime, " } ?? ""
            findings.append(Finding("lifetime", .ok, "\(issued)\(Int(remaining)) s left"))
        }
    }

    private func checkAuthorization(_ claims: JWTClaims, into findings: inout [Finding]) {
        let scope = options.scope
        let granted = claims.authorization.filter { scope.kind.claimKeys.contains($0.key.lowercased()) }.flatMap(
            \.value)
        if granted.contains(scope.id) {
            findings.append(Finding("authorization", .ok, "covers \(scope)"))
        } else if granted.contains(JWTClaims.wildcard) {
            findings.append(
                options.allowWildcard
                    ? Finding(
                        "authorization", .warning, "wildcard \"*\" (allowed by --allow-wildcard)",
                        fix: "mint tokens for one \(scope.kind) in apps")
                    : Finding(
                        "authorization", .failure, "wildcard \"*\": one phone could act on every \(scope.kind)",
                        fix: "mint the token for the requested ID, or pass --allow-wildcard for a trusted server"))
        } else {
            let keys = claims.authorization.keys.sorted().joined(separator: ", ")
            findings.append(
                Finding(
                    "authorization", .failure,
                    keys.isEmpty ? "no authorization claim" : "does not name \(scope) (keys: \(keys))",
                    fix: "set authorization.\(scope.kind.claimKeys[0]) to the requested ID"))
        }
    }

    private func checkClock(_ claims: JWTClaims, into findings: inout [Finding]) {
        guard let iat = claims.issuedAt else {
            findings.append(Finding("clock", .warning, "no iat claim", fix: "set iat to the minting time"))
            return
        }
        let now = clock.now()
        let skew = iat.timeIntervalSince(now)
        let format = ISO8601DateFormatter()
        if abs(skew) > Self.clockSkewTolerance {
            findings.append(
                Finding(
                    "clock", .failure,
                    "iat \(format.string(from: iat)) is \(Int(abs(skew))) s \(skew > 0 ? "ahead of" : "behind") this machine (\(format.string(from: now)))",
                    fix: "synchronise the backend's clock (NTP); the fleet service tolerates about 10 minutes"))
        } else {
            findings.append(Finding("clock", .ok, "iat within \(Int(abs(skew))) s of this machine's clock"))
        }
    }
}
