package import Foundation

/// Turns a backend response into a validated ``AuthToken``, or a ``FleetAuthError`` that
/// names the problem. It is a pure function of its inputs, so every rule is testable.
///
/// The rules, in order: 2xx; size; format; a JWT with `exp` that the body's expiry agrees
/// with; a lifetime within the policy; an `authorization` claim covering the scope. Expiry is
/// the receipt time plus the life left by the server's clock, so device skew does not matter.
package struct TokenResponseParser: Sendable {
    package var format: TokenResponseFormat
    package var policy: RefreshPolicy
    package var rules: TokenRules
    package var maximumResponseBytes: Int

    package init(
        format: TokenResponseFormat, policy: RefreshPolicy = RefreshPolicy(), rules: TokenRules = TokenRules(),
        maximumResponseBytes: Int = 64 * 1024
    ) {
        self.format = format
        self.policy = policy
        self.rules = rules
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// How far the device's wall clock and a token's `iat` may disagree before, without a
    /// `Date` header, the device's clock is believed instead: the fleet service's tolerance.
    package static let clockAgreement: TimeInterval = 600

    /// Parses and validates `response`, received at `receivedAt` (device clock), as a token for
    /// `scope`; with `clock`, the token's monotonic expiry counts on that clock's uptime.
    /// `credentialSent`: whether the request carried a credential, for the message of a 401
    /// or 403 (see ``statusError(_:scope:credentialSent:)``).
    package func token(
        from response: TransportResponse, for scope: AuthorizationScope, receivedAt: Date,
        clock: (any WallClock)? = nil, credentialSent: Bool? = nil
    ) throws(FleetAuthError) -> AuthToken {
        // The uptime of receipt is read now, next to the caller's `receivedAt`, not after the
        // parse: a clock moved meanwhile (another thread advancing a manual clock) would
        // otherwise set the monotonic expiry later than the wall one.
        let receipt = clock.map { (clock: $0, uptime: $0.uptime()) }
        do {
            return try parse(
                response, scope: scope, receivedAt: receivedAt, receipt: receipt, credentialSent: credentialSent)
        } catch {
            throw error.adding(scope: scope, url: response.url)
        }
    }

    /// The issuer's time when the answer left it: the `Date` header; without one, `iat`
    /// while the device's clock agrees with it within ``clockAgreement``, else the
    /// device's clock (an old token and a device clock that is off look alike then, and an
    /// old token must not pass as fresh).
    private static func issuerNow(_ response: TransportResponse, claims: JWTClaims, receivedAt: Date)
        -> (now: Date, fromDevice: Bool)
    {
        if let date = serverDate(response) { return (date, false) }
        guard let iat = claims.issuedAt else { return (receivedAt, true) }
        if abs(receivedAt.timeIntervalSince(iat)) <= clockAgreement { return (iat, false) }
        return (receivedAt, true)
    }

    /// How far the backend's clock is ahead of the device's: by its `Date` header, else by
    /// an `iat` in the device's future (a past `iat` may just be an older token); 0 unknown.
    private static func issuerClockOffset(_ response: TransportResponse, claims: JWTClaims, receivedAt: Date)
        -> TimeInterval
    {
        if let date = serverDate(response) { return date.timeIntervalSince(receivedAt) }
        if let iat = claims.issuedAt, iat > receivedAt { return iat.timeIntervalSince(receivedAt) }
        return 0
    }

    private func parse(
        _ response: TransportResponse, scope: AuthorizationScope, receivedAt: Date,
        receipt: (clock: any WallClock, uptime: TimeInterval)?, credentialSent: Bool?
    ) throws(FleetAuthError) -> AuthToken {
        if let error = statusError(response, scope: scope, credentialSent: credentialSent) { throw error }
        guard response.body.count <= maximumResponseBytes else {
            throw FleetAuthError(
                reason: .responseTooLarge,
                message:
                    "The body has \(response.body.count) bytes, over the \(maximumResponseBytes)-byte cap; return only the token and its expiry.",
                status: response.status)
        }
        var (value, bodyExpiry): (String, Double?)
        do {
            (value, bodyExpiry) = try extract(response)
        } catch {
            throw error.appending(Self.formatFix(for: response.body))
        }
        // A native, contiguous copy: JSON parsing may hand back a bridged string whose every
        // `utf8` walk is slow, and the value is read on every request that carries it.
        value.makeContiguousUTF8()
        let claims = try JWTDecoder.decode(value)
        if claims.isUnsigned {
            throw FleetAuthError(
                reason: .malformedToken,
                message:
                    "The JWT is unsigned (its header's `alg` is \(claims.algorithm.map { "`\($0)`" } ?? "missing")); the fleet service accepts only signed tokens, so FleetAuth refuses it. Have the backend sign its tokens (RS256)."
            )
        }
        guard let exp = claims.expiresAt else {
            throw FleetAuthError(
                reason: .missingExpiry,
                message: "The JWT has no `exp` claim; the backend must set one (at most one hour after `iat`).")
        }
        if let issued = claims.issuedLifetime, issued <= 0 {
            throw FleetAuthError(
                reason: .malformedToken,
                message: "The JWT's `exp` is not after its `iat`; check how the backend computes them.")
        }
        let (serverNow, fromDevice) = Self.issuerNow(response, claims: claims, receivedAt: receivedAt)
        if let bodyExpiry {
            do {
                try check(bodyExpiry, against: exp, serverNow: serverNow)
            } catch {
                let fix =
                    if let unit = agreeingUnit(bodyExpiry, against: exp, serverNow: serverNow) {
                        "Read as \(unit.name) it agrees: set the TokenEndpoint's `format: \(format.reading(expiryIn: unit).spelling.swift)`, or make the backend send what the format reads."
                    } else if let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any],
                        let presetFix = Self.presetFix(for: object, other: format)
                    {
                        presetFix
                    } else {
                        "It agrees with `exp` in no unit: make the backend state the expiry of the token it sends."
                    }
                throw error.appending(fix)
            }
        }
        // Never more life than the token was issued with, whichever clock is believed.
        let remaining = min(exp.timeIntervalSince(serverNow), claims.issuedLifetime ?? .infinity)
        guard remaining > 0 else {
            throw FleetAuthError(
                reason: .tokenExpired,
                message: fromDevice
                    ? "By this device's clock the token expired \(Int(-remaining)) s ago\(claims.issuedAt.map { ", \(Int(receivedAt.timeIntervalSince($0))) s after it was issued" } ?? ""). Without a Date header an old token and a device clock that is off look alike: have the backend send a Date header and mint a new token per request, or set this device's clock."
                    : "The token expired \(Int(-remaining)) s before the backend answered (by the backend's own clock); mint a new token per request instead of serving an old one."
            )
        }
        let lifetime = claims.issuedLifetime ?? remaining
        // Exactly the fleet service's limit: tolerance is for clock skew, not lifetimes.
        guard lifetime <= policy.maximumLifetime else {
            throw FleetAuthError(
                reason: .lifetimeTooLong,
                message:
                    "The token lives \(Int(lifetime)) s (exp − iat); the fleet service rejects more than \(Int(policy.maximumLifetime)) s. Shorten the lifetime the backend sets."
            )
        }
        guard policy.acceptsShortLife(lifetime: lifetime, remaining: remaining) else {
            throw FleetAuthError(
                reason: .lifetimeTooShort,
                message:
                    "The token arrived with \(Int(remaining)) s of its \(Int(lifetime)) s left, too little to use; mint tokens that live at least \(Int(policy.minimumLifetime)) s and serve them fresh."
            )
        }
        if let violation = rules.audienceViolation(in: claims) { throw violation }
        if let violation = rules.fleetViolation(in: claims, for: scope) { throw violation }
        guard claims.covers(scope) else { throw scopeMismatch(claims, scope: scope, url: response.url) }
        if let violation = rules.wildcardViolation(in: claims, for: scope) { throw violation }
        return AuthToken(
            value: value, scope: scope, receivedAt: receivedAt, expiresAt: receivedAt.addingTimeInterval(remaining),
            lifetime: lifetime, uptimeExpiry: receipt.map { ($0.clock, $0.uptime + remaining) },
            issuerClockOffset: Self.issuerClockOffset(response, claims: claims, receivedAt: receivedAt))
    }

    /// The token and the body's expiry number (if the format has one), without any
    /// validation of the token itself.
    package func extract(_ response: TransportResponse) throws(FleetAuthError) -> (String, Double?) {
        switch format.body {
        case .plainText:
            guard let text = String(data: response.body, encoding: .utf8) else {
                throw malformed("The body is not UTF-8 text", response)
            }
            if (try? JSONSerialization.jsonObject(with: response.body)) is [String: Any] {
                throw malformed("The body is a JSON object, not a bare JWT", response)
            }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw malformed("The body is empty; it should hold the JWT", response) }
            return (token, nil)
        case .json(let tokenKey, let expiry):
            guard let json = try? JSONSerialization.jsonObject(with: response.body, options: []),
                let object = json as? [String: Any]
            else {
                throw malformed("The body is not a JSON object; expected \(format.description)", response)
            }
            guard let rawToken = object[tokenKey] else {
                let keys = object.keys.sorted().prefix(10).joined(separator: ", ")
                throw malformed(
                    "The JSON has no `\(tokenKey)` key (keys: \(keys.isEmpty ? "none" : keys))", response)
            }
            guard let token = rawToken as? String else {
                throw malformed("`\(tokenKey)` is \(Self.jsonTypeName(rawToken)), not a string", response)
            }
            guard !token.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw malformed("`\(tokenKey)` is empty or blank", response)
            }
            guard let expiry else { return (token, nil) }
            guard let rawExpiry = object[expiry.key], !(rawExpiry is NSNull) else {
                throw malformed(
                    "The JSON has no `\(expiry.key)` expiry key, which \(format.description) reads", response)
            }
            guard let number = JSONNumber.value(rawExpiry)?.doubleValue else {
                throw malformed("`\(expiry.key)` is \(Self.jsonTypeName(rawExpiry)), not a number", response)
            }
            guard number.isFinite, number >= 0, number < 1e15 else {
                throw malformed("`\(expiry.key)` (\(number)) is negative or out of range", response)
            }
            return (token, number)
        }
    }

    /// Compares the body's expiry with `exp`, both turned into absolute server time.
    package func check(_ bodyExpiry: Double, against exp: Date, serverNow: Date) throws(FleetAuthError) {
        guard case .json(_, let field?) = format.body else { return }
        let stated = Self.date(bodyExpiry, in: field.unit, serverNow: serverNow)
        let gap = stated.timeIntervalSince(exp)
        guard abs(gap) > policy.expiryTolerance else { return }
        let ratio = abs(stated.timeIntervalSince(serverNow)) / max(1, abs(exp.timeIntervalSince(serverNow)))
        let unitHint =
            if field.unit == .absoluteSeconds && bodyExpiry > 1e11 {
                " The number looks like milliseconds."
            } else if field.unit == .absoluteMilliseconds && bodyExpiry < 1e11 {
                " The number looks like seconds."
            } else if ratio > 500 { " It is about 1000× too far out: a milliseconds/seconds mix-up." } else { "" }
        throw FleetAuthError(
            reason: .expiryMismatch,
            message:
                "`\(field.key)` read as \(field.unit.name) says the token expires \(Int(abs(gap))) s \(gap > 0 ? "after" : "before") its JWT `exp`.\(unitHint)"
        )
    }

    /// The other unit in which the body's expiry number agrees with `exp`, if one does.
    package func agreeingUnit(_ bodyExpiry: Double, against exp: Date, serverNow: Date) -> TokenResponseFormat
        .ExpiryUnit?
    {
        guard case .json(_, let field?) = format.body else { return nil }
        let units: [TokenResponseFormat.ExpiryUnit] = [.absoluteSeconds, .absoluteMilliseconds, .secondsFromNow]
        return units.first { unit in
            unit != field.unit
                && abs(Self.date(bodyExpiry, in: unit, serverNow: serverNow).timeIntervalSince(exp))
                    <= policy.expiryTolerance
        }
    }

    /// The moment a body's expiry number names, read in `unit`.
    private static func date(_ number: Double, in unit: TokenResponseFormat.ExpiryUnit, serverNow: Date) -> Date {
        switch unit.value {
        case .absoluteSeconds: Date(timeIntervalSince1970: number)
        case .absoluteMilliseconds: Date(timeIntervalSince1970: number / 1000)
        case .secondsFromNow: serverNow.addingTimeInterval(number)
        }
    }

    /// The fix, in Swift, for a body the format does not read: the preset that reads its
    /// keys, `.plainText` for a bare JWT, or how to describe keys of the backend's own.
    private static func formatFix(for body: Data) -> String {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            let text = String(decoding: body.prefix(16 * 1024), as: UTF8.self)
            return (try? JWTDecoder.decode(text.trimmingCharacters(in: .whitespacesAndNewlines))) != nil
                ? "The body is a bare JWT: set the TokenEndpoint's `format: .plainText`."
                : "Check that the TokenEndpoint's `url` is the token endpoint."
        }
        if let presetFix = presetFix(for: object) { return presetFix }
        return
            "Describe the body's keys with the TokenEndpoint's `format: .json(tokenKey:expiryKey:expiryUnit:)`; `fleetauth check-endpoint` infers them."
    }

    /// "This body is the … shape: set … `format: …`" for the preset whose keys the JSON
    /// `object` holds, unless it is `other`; `nil` when none is.
    private static func presetFix(for object: [String: Any], other: TokenResponseFormat? = nil) -> String? {
        guard let preset = TokenResponseFormat.preset(readingKeysOf: object), preset.format != other else { return nil }
        return "This body is the \(preset.format.description) shape: set the TokenEndpoint's `format: \(preset.swift)`."
    }

    private func malformed(_ problem: String, _ response: TransportResponse) -> FleetAuthError {
        FleetAuthError(reason: .malformedResponse, message: "\(problem).", status: response.status)
    }

    private static func jsonTypeName(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case is String: "a string"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        default: JSONNumber.value(value) == nil ? "a boolean" : "a number"
        }
    }
}
