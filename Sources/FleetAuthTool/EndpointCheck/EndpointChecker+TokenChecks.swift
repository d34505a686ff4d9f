import FleetAuthCore
import Foundation

/// The checks on the token itself: the body's shape and units, the JWT, its header,
/// identity, expiry, lifetime, `authorization` claim and clock.
extension EndpointChecker {
    /// Finds the format the body matches: the one given, or among the presets that read
    /// it the one whose expiry agrees with the JWT (presets can share keys but not units).
    func checkShape(_ response: TransportResponse, into findings: inout [Finding])
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
        if agreeing == nil, matches.isEmpty, options.format == nil, let inferred = inferredShape(of: response) {
            let (flags, swift) = inferred.1.spelling
            let unit = Self.expiryUnit(of: inferred.1).map { ", expiry in \($0.name)" } ?? ", expiry from the JWT's exp"
            findings.append(
                Finding(
                    "shape", .warning, "no preset matches; inferred \(inferred.1.description)\(unit)",
                    fix: "configure it: \(flags) here, format: \(swift) in the SDK"))
            return inferred
        }
        guard let match = agreeing ?? matches.first else {
            if looksLikeJSON, (try? JSONSerialization.jsonObject(with: response.body)) == nil {
                findings.append(
                    Finding(
                        "shape", .failure,
                        "starts as JSON but does not parse (\(response.body.count) bytes): cut off, or a literal JSON has not (NaN, Infinity, a trailing comma)",
                        fix: "send the whole body as valid JSON, numbers as digits"))
                return nil
            }
            findings.append(
                Finding(
                    "shape", .failure,
                    options.format == nil
                        ? "matches no preset (\(firstError?.message ?? "unreadable"))"
                        : firstError?.message ?? "unreadable",
                    fix: shapeFix(for: response)))
            return nil
        }
        let unit = Self.expiryUnit(of: match.1).map { ", expiry in \($0.name)" } ?? ", expiry from the JWT's exp"
        findings.append(Finding("shape", .ok, "matches \(match.1.description)\(unit)"))
        return match
    }

    /// The flags that read `response`'s body: the preset whose keys it holds, or the keys
    /// inferred from it; else the shapes to answer in.
    func shapeFix(for response: TransportResponse) -> String {
        if let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any],
            let preset = TokenResponseFormat.preset(readingKeysOf: object)
        {
            return
                "the body is the \(preset.format.description) shape: pass --format \(preset.name) (Swift: format: \(preset.swift))"
        }
        if let inferred = inferredShape(of: response) {
            let (flags, swift) = inferred.1.spelling
            return "the body reads as \(inferred.1.description): pass \(flags) (Swift: format: \(swift))"
        }
        return "answer {\"token\": \"<jwt>\"} or another shape --format names, or pass --format with the body's shape"
    }

    /// Presets with an expiry key first, so a body with one is read with it.
    static let presetsMostSpecificFirst: [TokenResponseFormat] =
        TokenResponseFormat.presets.filter { expiryUnit(of: $0) != nil }
        + TokenResponseFormat.presets.filter { expiryUnit(of: $0) == nil }

    static func expiryUnit(of format: TokenResponseFormat) -> TokenResponseFormat.ExpiryUnit? {
        if case .json(_, let field?) = format.body { return field.unit }
        return nil
    }

    func checkJWT(_ token: String, into findings: inout [Finding]) -> JWTClaims? {
        do {
            let claims = try JWTDecoder.decode(token)
            findings.append(Finding("jwt", .ok, "compact JWT, \(token.utf8.count) bytes"))
            return claims
        } catch {
            findings.append(Finding("jwt", .failure, error.message, fix: "return the signed JWT the backend minted"))
            return nil
        }
    }

    /// The fix for a token of another audience: mint it for `expected`, or name the one the
    /// token has with `--audience` and `TokenRules(expectedAudience:)` if the fleet service
    /// expects that one.
    func audienceFix(expected: String, found: [String]) -> String {
        guard found.count == 1, let audience = found.first else {
            return
                "mint tokens for \(expected), or, if your fleet service expects another audience, pass it with --audience (Swift: TokenRules(expectedAudience:))"
        }
        return
            "mint tokens for \(expected), or, if your fleet service expects \(audience), pass --audience \(audience) (Swift: TokenRules(expectedAudience: \(Self.literal(audience))))"
    }

    func checkHeader(_ claims: JWTClaims, into findings: inout [Finding]) {
        let alg = claims.algorithm ?? "missing"
        switch alg {
        case "RS256": findings.append(Finding("header.alg", .ok, "RS256"))
        case _ where claims.isUnsigned:
            findings.append(
                Finding(
                    "header.alg", .failure, "unsigned (alg \(alg))",
                    fix: "sign tokens with RS256: the fleet service accepts no unsigned token, and the SDK refuses them"
                ))
        default:
            findings.append(Finding("header.alg", .warning, alg, fix: "the fleet service expects RS256 signatures"))
        }
        findings.append(
            claims.keyID.map { Finding("header.kid", .ok, $0) }
                ?? Finding("header.kid", .warning, "missing", fix: "set kid to the signing key's ID"))
    }

    func checkIdentity(_ claims: JWTClaims, into findings: inout [Finding]) {
        if rules.audienceViolation(in: claims) != nil, let expected = options.audience {
            let found = claims.audience.isEmpty ? "missing" : claims.audience.joined(separator: ", ")
            findings.append(
                Finding(
                    "aud", .failure, "\(found), expected \(expected)",
                    fix: audienceFix(expected: expected, found: claims.audience)))
        } else if claims.audience.isEmpty {
            findings.append(Finding("aud", .warning, "missing (not checked: --audience none)"))
        } else {
            findings.append(Finding("aud", .ok, claims.audience.joined(separator: ", ")))
        }
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

    func checkExpiryAgreement(
        format: TokenResponseFormat, bodyExpiry: Double?, claims: JWTClaims, serverNow: Date,
        into findings: inout [Finding]
    ) {
        guard let bodyExpiry, let exp = claims.expiresAt, let unit = Self.expiryUnit(of: format) else { return }
        do {
            try TokenResponseParser(format: format).check(bodyExpiry, against: exp, serverNow: serverNow)
            findings.append(
                Finding("expiry-agreement", .ok, "the body's expiry (\(unit.name)) agrees with the JWT's exp"))
        } catch {
            let parser = TokenResponseParser(format: format)
            let fix =
                if let agreeing = parser.agreeingUnit(bodyExpiry, against: exp, serverNow: serverNow) {
                    "read as \(agreeing.name) it agrees: pass \(format.reading(expiryIn: agreeing).spelling.flags) (Swift: format: \(format.reading(expiryIn: agreeing).spelling.swift)), or make the backend send \(unit.name)"
                } else {
                    "the number agrees with exp in no unit: make the backend state the expiry of the token it sends"
                }
            findings.append(Finding("expiry-agreement", .failure, error.message, fix: fix))
        }
    }

    func checkLifetime(_ claims: JWTClaims, serverNow: Date, into findings: inout [Finding]) {
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
        } else if let refusal = Self.shortLifeRefusal(
            lifetime: claims.issuedLifetime ?? remaining, remaining: remaining)
        {
            findings.append(
                Finding(
                    "lifetime", .failure, refusal, fix: "mint tokens that live well over 5 minutes (an hour is usual)"))
        } else if remaining <= Self.minimumRemainingLife {
            // The SDK takes it (its margin shrinks to a quarter of a short lifetime); the
            // contract asks for 5 minutes: an advisory, not a failure.
            findings.append(
                Finding(
                    "lifetime", .warning, "\(Int(remaining)) s left: usable, but under the contract's 5 minutes",
                    fix: "mint tokens that live well over 5 minutes (an hour is usual)"))
        } else {
            let issued = claims.issuedLifetime.map { "\(Int($0)) s lifetime, " } ?? ""
            findings.append(Finding("lifetime", .ok, "\(issued)\(Int(remaining)) s left"))
        }
    }

    func checkClock(_ claims: JWTClaims, serverDate: Date?, into findings: inout [Finding]) {
        guard let iat = claims.issuedAt else {
            findings.append(Finding("clock", .warning, "no iat claim", fix: "set iat to the minting time"))
            return
        }
        let now = clock.now()
        let skew = iat.timeIntervalSince(now)
        let format = ISO8601DateFormatter()
        let agreement = TokenResponseParser.clockAgreement
        if let serverDate, abs(serverDate.timeIntervalSince(now)) <= agreement,
            serverDate.timeIntervalSince(iat) > agreement
        {
            // The backend's own clock agrees with this machine: the token is old, not the clock off.
            findings.append(
                Finding(
                    "clock", .failure,
                    "iat \(format.string(from: iat)) is \(Int(serverDate.timeIntervalSince(iat))) s before the backend's own Date header, which agrees with this machine: the backend served an old token",
                    fix: "mint a new token per request instead of serving a stored one"))
        } else if abs(skew) > agreement {
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
