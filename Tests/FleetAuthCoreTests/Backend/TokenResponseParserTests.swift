import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Backend response parsing and validation", .timeLimit(.minutes(10)))
struct TokenResponseParserTests {
    let scope = AuthorizationScope.vehicle("v-42")
    let now = Answers.serverNow

    func parse(_ response: TransportResponse, format: TokenResponseFormat = .tokenOnly, receivedAt: Date? = nil)
        throws(FleetAuthError) -> AuthToken
    {
        try TokenResponseParser(format: format).token(from: response, for: scope, receivedAt: receivedAt ?? now)
    }

    /// Every ready-made shape.
    static let presets: [TokenResponseFormat] = [
        .tokenOnly, .swiftSample(), .objectiveCSample(), .jwtWithExpirationTimestamp,
        .tokenWithExpirationTimestampMilliseconds, .tokenWithExpiresInSeconds, .plainText,
    ]

    /// Every preset, answered by the in-memory backend in its own shape, parses to a token
    /// that expires when the JWT says.
    @Test(arguments: presets)
    func presetsParseTheirShape(format: TokenResponseFormat) async throws {
        let clock = ManualWallClock(now: now)
        let backend = InMemoryTokenBackend(clock: clock, configuration: .init(lifetime: 1800, format: format))
        let response = try await backend.respond(
            to: TransportRequest(url: URL(string: "https://b.example/token?vehicleId=v-42")!))
        let token = try parse(response, format: format)
        #expect(token.expiresAt == now.addingTimeInterval(1800))
        #expect(token.lifetime == 1800)
        #expect(token.scope == scope)
    }

    @Test func deviceClockSkewDoesNotMoveLocalExpiry() throws {
        // The device clock is three hours behind the backend; expiry is receipt + remaining life.
        let device = now.addingTimeInterval(-3 * 3600)
        let token = try parse(Answers.json(["token": Answers.jwt()]), receivedAt: device)
        #expect(token.expiresAt == device.addingTimeInterval(3600))
    }

    @Test func dateHeaderMeasuresRemainingLifeOfAnOlderToken() throws {
        // Minted 20 minutes before the answer: 40 minutes left, whatever the device clock says.
        let response = Answers.json(["token": Answers.jwt()], date: now.addingTimeInterval(1200))
        let device = now.addingTimeInterval(86_400)
        let token = try parse(response, receivedAt: device)
        #expect(token.expiresAt == device.addingTimeInterval(2400))
        #expect(token.lifetime == 3600)
    }

    @Test func withoutDateHeaderIatIsTheServerTime() throws {
        let token = try parse(
            Answers.json(["token": Answers.jwt()], date: nil), receivedAt: now.addingTimeInterval(-500))
        #expect(token.expiresAt == now.addingTimeInterval(-500 + 3600))
    }

    @Test func plainTextBodyWithTrailingNewline() throws {
        let token = try parse(Answers.raw(Data((Answers.jwt() + "\r\n").utf8)), format: .plainText)
        #expect(!token.value.hasSuffix("\n"))
    }

    @Test func secondsReadAsMillisecondsIsCaughtWithAHint() {
        // The Swift-sample format expects absolute seconds; the backend sent milliseconds.
        let response = Answers.json(["token": Answers.jwt(), "expiration": (1_800_000_000 + 3600) * 1000])
        do {
            _ = try parse(response, format: .swiftSample())
            Issue.record("expected expiryMismatch")
        } catch {
            #expect(error.reason == .expiryMismatch)
            #expect(error.message.contains("milliseconds"))
        }
    }

    @Test func relativeExpiryThousandTimesTooLargeIsCaught() {
        let response = Answers.json(["token": Answers.jwt(), "expiresInSeconds": 3_600_000])
        #expect(throws: FleetAuthError.self) { try parse(response, format: .tokenWithExpiresInSeconds) }
    }

    @Test func bodyExpiryWithinToleranceIsAccepted() throws {
        let response = Answers.json(["token": Answers.jwt(), "expiration_timestamp_ms": (1_800_003_600 - 30) * 1000])
        _ = try parse(response, format: .tokenWithExpirationTimestampMilliseconds)
    }

    @Test func wildcardIsRefusedUnlessAllowed() throws {
        let answer = Answers.json(["token": Answers.jwt(id: "*")])
        #expect(throws: FleetAuthError.self) { _ = try parse(answer) }
        do {
            _ = try parse(answer)
        } catch {
            #expect(error.reason == .wildcardRefused)
        }
        let trusted = TokenResponseParser(format: .tokenOnly, rules: TokenRules(allowsWildcard: true))
        _ = try trusted.token(from: answer, for: scope, receivedAt: now)
    }

    @Test func aTokenForAnotherAudienceIsRefusedNamingBoth() throws {
        let answer = Answers.json(["token": Answers.jwt(extra: ["aud": "https://other.example/"])])
        do {
            _ = try parse(answer)
            Issue.record("a token for another audience was accepted")
        } catch {
            #expect(error.reason == .audienceMismatch)
            #expect(error.message.contains("https://other.example/"))
            #expect(error.message.contains(TokenRules.fleetServiceAudience))
        }
        let own = TokenResponseParser(format: .tokenOnly, rules: TokenRules(expectedAudience: "https://other.example/"))
        _ = try own.token(from: answer, for: scope, receivedAt: now)
        let unchecked = TokenResponseParser(format: .tokenOnly, rules: TokenRules(expectedAudience: nil))
        _ = try unchecked.token(from: answer, for: scope, receivedAt: now)
    }

    @Test(arguments: [(3600.0, true), (3601, false), (3660, false)])
    func lifetimesOverAnHourAreRefusedExactly(lifetime: TimeInterval, accepted: Bool) {
        let answer = Answers.json(["token": Answers.jwt(lifetime: lifetime)])
        #expect(((try? parse(answer)) != nil) == accepted)
    }

    @Test func shortLivedTokenIsAcceptedWhenFresh() throws {
        let token = try parse(Answers.json(["token": Answers.jwt(lifetime: 120)]))
        #expect(token.lifetime == 120)
    }

    static let big = String(repeating: "x", count: 70 * 1024)

    /// Bad answers: each yields its documented error code.
    static let badAnswers: [(String, TransportResponse, TokenResponseFormat, FleetAuthError.Reason)] = [
        ("500", Answers.json(["error": "boom"], status: 500), .tokenOnly, .unexpectedStatus),
        ("503", Answers.json([:], status: 503), .tokenOnly, .unexpectedStatus),
        ("401", Answers.json([:], status: 401), .tokenOnly, .unexpectedStatus),
        ("404", Answers.json([:], status: 404), .tokenOnly, .unexpectedStatus),
        ("429", Answers.json([:], status: 429), .tokenOnly, .unexpectedStatus),
        (
            "302", Answers.raw(Data(), status: 302, headers: ["Location": "https://evil.example/"]), .tokenOnly,
            .redirectRefused
        ),
        ("body over cap", Answers.json(["token": big]), .tokenOnly, .responseTooLarge),
        ("not JSON", Answers.raw(Data("<html>hi</html>".utf8)), .tokenOnly, .malformedResponse),
        ("truncated JSON", Answers.raw(Data(#"{"token": "abc"#.utf8)), .tokenOnly, .malformedResponse),
        ("JSON array", Answers.raw(Data("[1]".utf8)), .tokenOnly, .malformedResponse),
        ("empty body", Answers.raw(Data()), .tokenOnly, .malformedResponse),
        ("token key missing", Answers.json(["access_token": Answers.jwt()]), .tokenOnly, .malformedResponse),
        ("token is a number", Answers.json(["token": 42]), .tokenOnly, .malformedResponse),
        ("token is null", Answers.json(["token": NSNull()]), .tokenOnly, .malformedResponse),
        ("token is empty", Answers.json(["token": ""]), .tokenOnly, .malformedResponse),
        ("token is whitespace", Answers.json(["token": "  \n "]), .tokenOnly, .malformedResponse),
        ("token is an object", Answers.json(["token": ["a": 1]]), .tokenOnly, .malformedResponse),
        ("token not a JWT", Answers.json(["token": "opaque-session-token"]), .tokenOnly, .malformedToken),
        ("plain text empty", Answers.raw(Data(" \n".utf8)), .plainText, .malformedResponse),
        ("plain text not UTF-8", Answers.raw(Data([0xff, 0xfe, 0xfd])), .plainText, .malformedResponse),
        (
            "exp missing",
            Answers.json(["token": InMemoryTokenBackend.jwt(payload: ["authorization": ["vehicleid": "v-42"]])]),
            .tokenOnly, .missingExpiry
        ),
        ("exp before iat", Answers.json(["token": Answers.jwt(exp: 1_799_999_000)]), .tokenOnly, .malformedToken),
        ("expiry key missing", Answers.json(["token": Answers.jwt()]), .tokenWithExpiresInSeconds, .malformedResponse),
        (
            "expiry is a string", Answers.json(["token": Answers.jwt(), "expiresInSeconds": "3600"]),
            .tokenWithExpiresInSeconds, .malformedResponse
        ),
        (
            "expiry is negative", Answers.json(["token": Answers.jwt(), "expiresInSeconds": -1]),
            .tokenWithExpiresInSeconds, .malformedResponse
        ),
        (
            "expiry is a boolean", Answers.json(["token": Answers.jwt(), "expiresInSeconds": true]),
            .tokenWithExpiresInSeconds, .malformedResponse
        ),
        (
            "expiry is huge", Answers.json(["token": Answers.jwt(), "expiration": 1e300]), .swiftSample(),
            .malformedResponse
        ),
        (
            "ms sent as s", Answers.json(["jwt": Answers.jwt(), "expirationTimestamp": 1_800_003_600]),
            .jwtWithExpirationTimestamp, .expiryMismatch
        ),
        (
            "relative sent as absolute", Answers.json(["token": Answers.jwt(), "expiration": 3600]), .swiftSample(),
            .expiryMismatch
        ),
        (
            "absolute sent as relative", Answers.json(["token": Answers.jwt(), "expiration": 1_800_003_600]),
            .objectiveCSample(), .expiryMismatch
        ),
        ("other vehicle", Answers.json(["token": Answers.jwt(id: "v-43")]), .tokenOnly, .scopeMismatch),
        (
            "trip token for a vehicle", Answers.json(["token": Answers.jwt(id: "v-42", key: "tripid")]), .tokenOnly,
            .scopeMismatch
        ),
        (
            "no authorization claim",
            Answers.json([
                "token": InMemoryTokenBackend.jwt(payload: [
                    "iat": 1_800_000_000, "exp": 1_800_003_600, "aud": TokenRules.fleetServiceAudience,
                ])
            ]),
            .tokenOnly, .scopeMismatch
        ),
        (
            "expired on arrival", Answers.json(["token": Answers.jwt(iat: 1_799_990_000, lifetime: 3600)]), .tokenOnly,
            .tokenExpired
        ),
        ("lifetime over an hour", Answers.json(["token": Answers.jwt(lifetime: 7200)]), .tokenOnly, .lifetimeTooLong),
        ("lifetime a day", Answers.json(["token": Answers.jwt(lifetime: 86_400)]), .tokenOnly, .lifetimeTooLong),
        ("lifetime 10 s", Answers.json(["token": Answers.jwt(lifetime: 10)]), .tokenOnly, .lifetimeTooShort),
        (
            "almost expired", Answers.json(["token": Answers.jwt(iat: 1_799_996_500, lifetime: 3600)]), .tokenOnly,
            .lifetimeTooShort
        ),
    ]

    @Test(arguments: badAnswers)
    func badAnswerIsATypedError(
        name: String, response: TransportResponse, format: TokenResponseFormat, code: FleetAuthError.Reason
    ) {
        do {
            let token = try parse(response, format: format)
            Issue.record("\(name): expected \(code), got \(token)")
        } catch {
            #expect(error.reason == code, "\(name): \(error)")
            #expect(error.scope == scope)
            #expect(!error.message.isEmpty)
            // The message never repeats the body, which may hold a token.
            if response.body.count > 20 {
                #expect(!error.description.contains(String(decoding: response.body, as: UTF8.self)))
            }
        }
    }

    @Test func statusErrorCarriesRetryAfterSeconds() {
        let response = Answers.raw(Data(), status: 429, headers: ["Retry-After": "7"])
        do {
            _ = try parse(response)
        } catch {
            #expect(error.retryAfter == 7)
            #expect(error.status == 429)
            #expect(error.isTransient)
        }
    }

    @Test func retryAfterAsHTTPDate() {
        let response = Answers.raw(
            Data(), status: 503, headers: ["Retry-After": HTTPDate.format(now.addingTimeInterval(12))])
        #expect(TokenResponseParser.retryAfter(response) == 12)
    }
}
