package import FleetAuthCore
package import FleetAuthInMemory
package import Foundation

/// One bad or adversarial answer a token backend can give, and the error FleetAuth must
/// turn it into. The same table runs through the in-memory transport and, over real HTTP,
/// through `URLSessionTransport` against the loopback fixture.
package struct HostileAnswer: Sendable, CustomStringConvertible {
    /// How the answer is delivered.
    package enum Delivery: Sendable {
        /// A complete HTTP answer.
        case http(status: Int, headers: [String: String], body: Data)
        /// A 200 whose body is `count` bytes of `a`: over the size cap.
        case oversized(count: Int)
        /// No answer before the timeout.
        case slow
        /// The connection closes halfway through the body.
        case closedMidBody
        /// Nothing listens.
        case refused
        /// A 302 to another host.
        case redirectToOtherHost
    }

    /// A short name (the only thing test output shows of a case).
    package let name: String
    /// The answer.
    package let delivery: Delivery
    /// The format the endpoint is configured with.
    package let format: TokenResponseFormat
    /// The error code FleetAuth must produce.
    package let expected: FleetAuthError.Reason
    /// A token value the fleet service rejected just before this answer, if the case is a
    /// backend that mints the same bytes again.
    package var rejectedBefore: String? = nil

    /// The name.
    package var description: String { name }
}

/// The table of hostile answers, for the vehicle `v-42`, minted around `now`.
package enum HostileAnswers {
    /// The vehicle every answer is fetched for.
    package static let scope = AuthorizationScope.vehicle("v-42")

    /// The engine that both test paths use: one attempt, no cooldown, a 5-second timeout.
    /// Its backoff (an hour) lies past its retry deadline too, so that a bug in counting
    /// attempts cannot leave `fetch` waiting for a retry on a clock that nothing moves (the
    /// engine's own tests catch such a bug).
    package static func engine(url: String, answer: HostileAnswer, transport: any HTTPTransport, clock: ManualWallClock)
        throws -> TokenEngine
    {
        try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: url, format: answer.format, timeout: 5), transport: transport,
                clock: clock,
                retry: RetryPolicy(
                    maximumAttempts: 1, initialBackoff: 3600, maximumBackoff: 3600, failureCooldown: 0)))
    }

    /// Fetches the scope's token through `engine`, moving the clock past the timeout when
    /// the answer is the slow one, and returns what the caller got.
    package static func fetch(_ answer: HostileAnswer, from engine: TokenEngine, clock: ManualWallClock) async
        -> Result<AuthToken, any Error>
    {
        if let rejected = answer.rejectedBefore {
            engine.invalidate(rejected, for: scope)
        }
        let fetch = Task { try await engine.token(for: scope) }
        if case .slow = answer.delivery {
            await clock.waitForSleepers(count: 1, within: 5)
            clock.advance(by: 5)
        }
        return await fetch.result
    }

    /// Answers `answer` in memory, the way the loopback fixture answers it over HTTP.
    package static func respond(with answer: HostileAnswer, clock: ManualWallClock) async throws
        -> TransportResponse
    {
        switch answer.delivery {
        case .http(let status, let headers, let body):
            return TransportResponse(status: status, headers: headers, body: body)
        case .oversized(let count):
            return TransportResponse(status: 200, body: Data(repeating: UInt8(ascii: "a"), count: count))
        case .redirectToOtherHost:
            return TransportResponse(status: 302, headers: ["Location": "https://elsewhere.example/token"])
        case .slow:
            try await clock.sleep(for: 86_400)
            return TransportResponse(status: 200)
        case .refused: throw URLError(.cannotConnectToHost)
        case .closedMidBody: throw URLError(.networkConnectionLost)
        }
    }

    /// Every hostile answer.
    package static func all(now: Date) -> [HostileAnswer] {
        let t = now.timeIntervalSince1970.rounded(.down)
        func jwt(_ edit: (inout [String: Any]) -> Void = { _ in }) -> String {
            var payload: [String: Any] = [
                "iss": "minter", "sub": "minter", "aud": TokenRules.fleetServiceAudience, "iat": t, "exp": t + 3600,
                "authorization": ["vehicleid": "v-42"],
            ]
            edit(&payload)
            return InMemoryTokenBackend.jwt(payload: payload)
        }
        func json(_ object: [String: Any]) -> Data {
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        }
        func answer(
            _ name: String, status: Int = 200, body: Data, contentType: String = "application/json",
            format: TokenResponseFormat = .tokenOnly, sendsDate: Bool = true, _ expected: FleetAuthError.Reason
        ) -> HostileAnswer {
            var headers = ["Content-Type": contentType]
            // Like most HTTP servers, the answer says when it was made.
            if sendsDate { headers["Date"] = HTTPDate.format(now) }
            return HostileAnswer(
                name: name,
                delivery: .http(status: status, headers: headers, body: body),
                format: format,
                expected: expected)
        }
        let valid = jwt()
        let parts = valid.split(separator: ".").map(String.init)
        let b64 = { (text: String) in Base64URL.encode(Data(text.utf8)) }
        return [
            // Bodies that are not what the format says.
            answer(
                "HTML error page", body: Data("<html><body>Bad gateway</body></html>".utf8), contentType: "text/html",
                .malformedResponse),
            answer(
                "truncated JSON", body: Data(#"{"token": "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOj"#.utf8), .malformedResponse),
            answer("empty body", body: Data(), .malformedResponse),
            answer("JSON array", body: Data("[\"\(valid)\"]".utf8), .malformedResponse),
            answer("JSON string", body: Data("\"\(valid)\"".utf8), .malformedResponse),
            answer(
                "JSON nested 30000 deep",
                body: Data((String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000)).utf8),
                .malformedResponse),
            answer("invalid UTF-8", body: Data([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), .malformedResponse),
            answer("NaN literal", body: Data(#"{"token": NaN}"#.utf8), .malformedResponse),
            answer("token key missing", body: json(["access_token": valid]), .malformedResponse),
            answer("token is a number", body: json(["token": 12345]), .malformedResponse),
            answer("token is a boolean", body: json(["token": true]), .malformedResponse),
            answer("token is null", body: json(["token": NSNull()]), .malformedResponse),
            answer("token is an array", body: json(["token": [valid]]), .malformedResponse),
            answer("token is an object", body: json(["token": ["jwt": valid]]), .malformedResponse),
            answer("token is empty", body: json(["token": ""]), .malformedResponse),
            answer("token is whitespace", body: json(["token": " \t\n "]), .malformedResponse),
            answer(
                "plain body is blank", body: Data("\n\n".utf8), contentType: "text/plain", format: .plainText,
                .malformedResponse),
            // Tokens that are not usable JWTs.
            answer("opaque token", body: json(["token": "a3f9c2-session-token"]), .malformedToken),
            answer("JWT with two parts", body: json(["token": parts[0] + "." + parts[1]]), .malformedToken),
            answer("JWT with empty signature", body: json(["token": parts[0] + "." + parts[1] + "."]), .malformedToken),
            answer(
                "JWT with CR LF in its signature",
                body: json(["token": parts[0] + "." + parts[1] + "." + parts[2] + "\r\nX-Injected: 1"]), .malformedToken
            ),
            answer(
                "JWT with a space in its signature", body: json(["token": parts[0] + "." + parts[1] + ".sig nature"]),
                .malformedToken),
            answer(
                "JWT unsigned (alg none) with a signature",
                body: json(["token": b64(#"{"alg":"none","typ":"JWT"}"#) + "." + parts[1] + "." + parts[2]]),
                .malformedToken),
            answer(
                "JWT header not base64url", body: json(["token": "!!!." + parts[1] + "." + parts[2]]), .malformedToken),
            answer(
                "JWT payload not JSON", body: json(["token": parts[0] + "." + b64("not json") + "." + parts[2]]),
                .malformedToken),
            answer(
                "JWT payload truncated",
                body: json(["token": parts[0] + "." + String(parts[1].prefix(20)) + "." + parts[2]]), .malformedToken),
            answer("Bearer prefix kept", body: json(["token": "Bearer " + valid]), .malformedToken),
            answer("exp missing", body: json(["token": jwt { $0["exp"] = nil }]), .missingExpiry),
            answer("exp is a string", body: json(["token": jwt { $0["exp"] = "\(t + 3600)" }]), .malformedToken),
            answer("exp is negative", body: json(["token": jwt { $0["exp"] = -1 }]), .malformedToken),
            answer("exp is huge", body: json(["token": jwt { $0["exp"] = 1e300 }]), .malformedToken),
            answer("exp before iat", body: json(["token": jwt { $0["exp"] = t - 10 }]), .malformedToken),
            // Expiries that disagree or cannot be used.
            answer(
                "ms sent as s", body: json(["token": valid, "expiration": (t + 3600) * 1000]), format: .swiftSample(),
                .expiryMismatch),
            answer(
                "s sent as ms", body: json(["jwt": valid, "expirationTimestamp": t + 3600]),
                format: .jwtWithExpirationTimestamp, .expiryMismatch),
            answer(
                "absolute sent as relative", body: json(["token": valid, "expiresInSeconds": t + 3600]),
                format: .tokenWithExpiresInSeconds, .expiryMismatch),
            answer(
                "relative sent as absolute", body: json(["token": valid, "expiration": 3600]), format: .swiftSample(),
                .expiryMismatch),
            answer(
                "expiry is a string", body: json(["token": valid, "expiresInSeconds": "3600"]),
                format: .tokenWithExpiresInSeconds, .malformedResponse),
            answer(
                "expiry is negative", body: json(["token": valid, "expiresInSeconds": -5]),
                format: .tokenWithExpiresInSeconds, .malformedResponse),
            answer(
                "expiry is huge", body: json(["token": valid, "expiration_timestamp_ms": 1e300]),
                format: .tokenWithExpirationTimestampMilliseconds, .malformedResponse),
            answer(
                "expiry is null", body: json(["token": valid, "expiresInSeconds": NSNull()]),
                format: .tokenWithExpiresInSeconds, .malformedResponse),
            answer(
                "expired on arrival",
                body: json([
                    "token": jwt {
                        $0["iat"] = t - 4000; $0["exp"] = t - 400
                    }
                ]), .tokenExpired),
            answer("lifetime two hours", body: json(["token": jwt { $0["exp"] = t + 7200 }]), .lifetimeTooLong),
            answer("lifetime a year", body: json(["token": jwt { $0["exp"] = t + 31_536_000 }]), .lifetimeTooLong),
            answer("lifetime 10 s", body: json(["token": jwt { $0["exp"] = t + 10 }]), .lifetimeTooShort),
            answer(
                "one minute left of an hour",
                body: json([
                    "token": jwt {
                        $0["iat"] = t - 3540; $0["exp"] = t + 60
                    }
                ]), .lifetimeTooShort),
            answer(
                "old token without a Date header",
                body: json([
                    "token": jwt {
                        $0["iat"] = t - 7200; $0["exp"] = t - 3600
                    }
                ]),
                sendsDate: false, .tokenExpired),
            answer(
                "unknown key names", body: json(["accessToken": valid, "expiresAtMillis": (t + 3600) * 1000]),
                .malformedResponse),
            answer(
                "stated expiry contradicts exp", body: json(["token": valid, "expiresInSeconds": 1]),
                format: .tokenWithExpiresInSeconds, .expiryMismatch),
            {
                // A backend that signs deterministically re-mints, within the second, the
                // very token the fleet service has just rejected.
                var remint = answer(
                    "deterministic re-mint of a rejected token", body: json(["token": valid]), .rejectedTokenReissued)
                remint.rejectedBefore = valid
                return remint
            }(),
            // Tokens for someone else.
            answer(
                "token for another audience", body: json(["token": jwt { $0["aud"] = "https://fleet.example.com/" }]),
                .audienceMismatch),
            answer("token with no audience", body: json(["token": jwt { $0["aud"] = nil }]), .audienceMismatch),
            answer(
                "wildcard token for every vehicle",
                body: json(["token": jwt { $0["authorization"] = ["vehicleid": "*"] }]),
                .wildcardRefused),
            answer(
                "token for another vehicle", body: json(["token": jwt { $0["authorization"] = ["vehicleid": "v-43"] }]),
                .scopeMismatch),
            answer(
                "trip token for a vehicle", body: json(["token": jwt { $0["authorization"] = ["tripid": "v-42"] }]),
                .scopeMismatch),
            answer("no authorization claim", body: json(["token": jwt { $0["authorization"] = nil }]), .scopeMismatch),
            answer(
                "authorization is a list of others",
                body: json(["token": jwt { $0["authorization"] = ["vehicleid": ["v-1", "v-2"]] }]), .scopeMismatch),
            // Every class of HTTP status.
            answer("HTTP 204", status: 204, body: Data(), .malformedResponse),
            answer("HTTP 301", status: 301, body: Data(), .redirectRefused),
            answer("HTTP 400", status: 400, body: json(["error": "bad request"]), .unexpectedStatus),
            answer("HTTP 401", status: 401, body: json(["token": valid]), .unexpectedStatus),
            answer("HTTP 403", status: 403, body: Data(), .unexpectedStatus),
            answer("HTTP 404", status: 404, body: Data(), .unexpectedStatus),
            answer("HTTP 418", status: 418, body: Data(), .unexpectedStatus),
            answer("HTTP 429", status: 429, body: Data(), .unexpectedStatus),
            answer("HTTP 500 with a token", status: 500, body: json(["token": valid]), .unexpectedStatus),
            answer(
                "HTTP 502", status: 502, body: Data("<html>bad gateway</html>".utf8), contentType: "text/html",
                .unexpectedStatus),
            answer("HTTP 503", status: 503, body: Data(), .unexpectedStatus),
            // The network misbehaving.
            HostileAnswer(
                name: "oversized body", delivery: .oversized(count: 200_000), format: .tokenOnly,
                expected: .responseTooLarge),
            HostileAnswer(
                name: "redirect to another host", delivery: .redirectToOtherHost, format: .tokenOnly,
                expected: .redirectRefused),
            HostileAnswer(name: "slow past the timeout", delivery: .slow, format: .tokenOnly, expected: .timedOut),
            HostileAnswer(
                name: "connection refused", delivery: .refused, format: .tokenOnly, expected: .transportFailure),
            HostileAnswer(
                name: "connection closed mid-body", delivery: .closedMidBody, format: .tokenOnly,
                expected: .transportFailure),
        ]
    }
}
