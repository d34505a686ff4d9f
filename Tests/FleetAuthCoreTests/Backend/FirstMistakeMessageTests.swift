import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// A new user's first mistakes each get the truth and the exact fix, in Swift's words.
@Suite("First mistakes name their fix", .timeLimit(.minutes(10)))
struct FirstMistakeMessageTests {
    let scope = AuthorizationScope.vehicle("v-42")
    let now = Answers.serverNow

    func failure(
        _ response: TransportResponse, format: TokenResponseFormat = .tokenOnly, scope: AuthorizationScope? = nil
    ) -> FleetAuthError? {
        do {
            _ = try TokenResponseParser(format: format).token(from: response, for: scope ?? self.scope, receivedAt: now)
            return nil
        } catch {
            return error
        }
    }

    /// The platform sample's body read with another format names the preset that reads it.
    @Test(arguments: [
        ("jwt", ["creationTimestamp": 1, "expirationTimestamp": 1_800_003_600_000], ".jwtWithExpirationTimestamp"),
        ("token", ["expiration_timestamp_ms": 1_800_003_600_000], ".tokenWithExpirationTimestampMilliseconds"),
        ("token", ["expiresInSeconds": 3600], ".tokenWithExpiresInSeconds"),
    ])
    func aBodyOfAnotherShapeNamesThePresetThatReadsIt(tokenKey: String, numbers: [String: Int], preset: String) throws {
        var body: [String: Any] = numbers
        body[tokenKey] = Answers.jwt()
        let error = try #require(failure(Answers.json(body), format: .swiftSample()))
        #expect(error.code == .malformedResponse)
        #expect(error.message.contains("set the TokenEndpoint's `format: \(preset)`"), "\(error.message)")
    }

    @Test func aBareJWTNamesPlainText() throws {
        let error = try #require(failure(Answers.raw(Data(Answers.jwt().utf8))))
        #expect(error.message.contains("`format: .plainText`"), "\(error.message)")
    }

    /// `.plainText` read against the sample's JSON body names the JSON preset, not a broken JWT.
    @Test func aJSONBodyReadAsPlainTextNamesThePresetThatReadsIt() throws {
        let body: [String: Any] = ["jwt": Answers.jwt(), "expirationTimestamp": 1_800_003_600_000]
        let error = try #require(failure(Answers.json(body), format: .plainText))
        #expect(error.message.hasPrefix("The body is a JSON object, not a bare JWT."), "\(error.message)")
        #expect(error.message.contains("`format: .jwtWithExpirationTimestamp`"))
    }

    /// An expiry key that names the wrong field: the preset that reads the body, and no minus sign.
    @Test func anExpiryKeyOnTheWrongFieldNamesThePresetThatReadsTheBody() throws {
        let body: [String: Any] = [
            "jwt": Answers.jwt(), "creationTimestamp": 1_800_000_000_000, "expirationTimestamp": 1_800_003_600_000,
        ]
        let format = TokenResponseFormat.json(
            tokenKey: "jwt", expiryKey: "creationTimestamp", expiryUnit: .absoluteMilliseconds)
        let error = try #require(failure(Answers.json(body), format: format))
        #expect(error.message.contains("expires 3600 s before its JWT `exp`"), "\(error.message)")
        #expect(error.message.contains("`format: .jwtWithExpirationTimestamp`"), "\(error.message)")
    }

    @Test func keysOfTheBackendsOwnNameTheJSONFormat() throws {
        let error = try #require(failure(Answers.json(["accessToken": Answers.jwt()])))
        #expect(error.message.contains("`format: .json(tokenKey:expiryKey:expiryUnit:)`"), "\(error.message)")
        #expect(!error.message.contains("This body is"))
    }

    /// Milliseconds read as seconds: the message names the unit in which the number agrees.
    @Test func aUnitMixUpNamesTheFormatThatReadsIt() throws {
        let body: [String: Any] = ["token": Answers.jwt(), "expiration": 1_800_003_600_000]
        let error = try #require(failure(Answers.json(body), format: .swiftSample()))
        #expect(error.message.contains("The number looks like milliseconds"))
        #expect(
            error.message.contains(
                "`format: .json(tokenKey: \"token\", expiryKey: \"expiration\", expiryUnit: .absoluteMilliseconds)`"),
            "\(error.message)")
        let preset = try #require(
            failure(
                Answers.json(["jwt": Answers.jwt(), "expirationTimestamp": 1_800_003_600]),
                format: .jwtWithExpirationTimestamp))
        #expect(preset.message.contains("Read as absolute Unix seconds it agrees"), "\(preset.message)")
    }

    /// A 404 lists the placeholders of the provider's own context and says what kind of body
    /// came back, without quoting any of it.
    @Test func a404NamesThePlaceholdersOfTheContextAndDescribesTheBody() throws {
        let secret = Answers.jwt()
        let body = Data(#"{"error": "no such route", "echo": "\#(secret)"}"#.utf8)
        let error = try #require(failure(Answers.raw(body, status: 404)))
        #expect(
            error.message.contains("({id}, {vehicleId} or {deliveryVehicleId}, or the query item"), "\(error.message)")
        #expect(!error.message.contains("{tripId}"))
        #expect(error.message.contains("Its body: a JSON object of \(body.count) bytes with 2 keys (not quoted"))
        #expect(!error.message.contains("no such route"))
        for part in secret.split(separator: ".") { #expect(!error.description.contains(part)) }
        let trip = try #require(failure(Answers.raw(body, status: 404), scope: .trip("t-7")))
        #expect(trip.message.contains("({id} or {tripId},"), "\(trip.message)")
    }

    /// A backend that echoes the request's headers cannot put them back into a message: a
    /// body is described by its size and kind, and only an OAuth error code from FleetAuth's
    /// own list is named.
    @Test func anErrorBodyIsDescribedNeverQuoted() throws {
        let echo = Data(#"{"error": "invalid_token", "headers": "Authorization=Bearer app-credential-123"}"#.utf8)
        let summary = try #require(TokenResponseParser.bodySummary(of: echo))
        #expect(
            summary.hasPrefix("a JSON object of \(echo.count) bytes with 2 keys, error `invalid_token`"), "\(summary)")
        #expect(!summary.contains("app-credential") && !summary.contains("Bearer"))
        let madeUp = Data(#"{"error": "Bearer app-credential-123"}"#.utf8)
        #expect(!(TokenResponseParser.bodySummary(of: madeUp) ?? "").contains("app-credential"))
        let text = try #require(TokenResponseParser.bodySummary(of: Data("Authorization: Basic dXNlcjpwYXNz".utf8)))
        #expect(text.hasPrefix("33 bytes of text") && !text.contains("dXNlcjpwYXNz"), "\(text)")
        #expect(TokenResponseParser.bodySummary(of: Data([0xFF, 0xFE]))?.hasPrefix("2 bytes of binary data") == true)
        #expect(TokenResponseParser.bodySummary(of: Data()) == nil)
    }

    /// A token minted for another vehicle names the ID it named, and that the ID went out as a
    /// query item because the URL has no placeholder.
    @Test func aTokenForAnotherVehicleNamesItsIDAndHowTheRequestSentOurs() throws {
        var response = Answers.json(["token": Answers.jwt(id: "someone-else")])
        response.url = URL(string: "https://api.example.com/token?vehicleId=v-42")
        let error = try #require(failure(response))
        #expect(error.message.contains(#"(vehicleid: "someone-else")"#), "\(error.message)")
        #expect(error.message.contains("the query item `vehicleId=v-42`, which FleetAuth adds"), "\(error.message)")
        response.url = URL(string: "https://api.example.com/token/driver/v-42")
        let inPath = try #require(failure(response))
        #expect(inPath.message.contains("named it in the URL's path"), "\(inPath.message)")
    }

    /// Formats that read the same body are equal, whatever their display names.
    @Test func formatsCompareByTheBodyTheyRead() {
        #expect(TokenResponseFormat.tokenOnly == .json(tokenKey: "token"))
        #expect(TokenResponseFormat.swiftSample() == .json(tokenKey: "token", expiryKey: "expiration"))
        #expect(TokenResponseFormat.tokenOnly != .jwtWithExpirationTimestamp)
        #expect(Set([TokenResponseFormat.tokenOnly, .json(tokenKey: "token")]).count == 1)
    }

    /// A placeholder of another context's kind is refused with the ones this provider fills.
    @Test func aPlaceholderOfAnotherKindListsOnlyTheContextsOwn() throws {
        let endpoint = TokenEndpoint(url: "https://api.example.com/token/driver/{tripId}")
        #expect {
            try endpoint.validate(for: [.vehicle])
        } throws: { error in
            let message = (error as? FleetAuthError)?.message ?? ""
            return message.hasSuffix("use {id}, {vehicleId} or {deliveryVehicleId}.")
        }
    }
}

/// A backend that never answers: the caller learns how long it waited, over how many
/// attempts, and which setting bounded what.
@Suite("A hanging backend names the settings that bound the wait", .timeLimit(.minutes(1)))
struct HangingBackendMessageTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func hang(timeout: TimeInterval, retry: RetryPolicy = RetryPolicy(jitter: 0)) async throws -> FleetAuthError {
        let h = try EngineHarness(retry: retry, endpointTimeout: timeout)
        h.transport.setFaultInjector { _, _ in .hang }
        let result = await h.clock.runToCompletion(horizon: 120) { [engine = h.engine] in
            try await engine.token(for: .vehicle("v-42"))
        }
        guard case .failure(let error as FleetAuthError) = result else {
            throw FleetAuthError(code: .invalidConfiguration, message: "expected a FleetAuthError, got \(result)")
        }
        return error
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theRetryDeadlineCutsTheLastAttempt() async throws {
        let error = try await hang(timeout: 15)
        #expect(error.code == .timedOut)
        #expect(
            error.message.hasPrefix(
                "The token backend did not answer within 14.5 s, what was left of the retry deadline for the callers' whole wait (30 s)"
            ),
            "\(error.message)")
        #expect(error.message.contains("This caller waited 30 s over 2 attempts"), "\(error.message)")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTimeoutOverTheDeadlineSaysTheDeadlineBoundedIt() async throws {
        let error = try await hang(timeout: 60)
        #expect(error.message.contains("did not answer within 30.0 s, what was left of the retry deadline"))
        #expect(
            error.message.contains(
                "raise both: `TokenEndpoint(…, timeout:)` and the provider's `retry: RetryPolicy(deadline:)`"))
        #expect(error.message.contains("the endpoint's timeout (1 min)"), "\(error.message)")
        #expect(error.message.contains("This caller waited 30 s over 1 attempt;"), "\(error.message)")
    }

    /// A last attempt left less than a tenth of a second by the deadline says how long in
    /// milliseconds: "0.0 s" read as no time at all.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aLastAttemptOfUnderATenthOfASecondIsSaidInMilliseconds() async throws {
        let error = try await hang(timeout: 15, retry: RetryPolicy(jitter: 0, deadline: 15.54))
        #expect(
            error.message.hasPrefix(
                "The token backend did not answer within 40 ms, what was left of the retry deadline"),
            "\(error.message)")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theEndpointTimeoutBoundsOneAttempt() async throws {
        let error = try await hang(timeout: 3, retry: RetryPolicy(maximumAttempts: 1))
        #expect(
            error.message.hasPrefix(
                "The token backend did not answer within 3.0 s, the endpoint's timeout for one attempt"),
            "\(error.message)")
        #expect(error.message.contains("This caller waited 3 s over 1 attempt;"), "\(error.message)")
    }
}

/// One verdict on unsigned tokens: the fleet service accepts none, so the SDK refuses every
/// one the checker fails, whatever follows the second dot.
@Suite("Unsigned tokens", .timeLimit(.minutes(10)))
struct UnsignedTokenTests {
    static func token(header: [String: Any]) -> String {
        let payload: [String: Any] = [
            "iss": "minter", "aud": TokenRules.fleetServiceAudience, "iat": 1_800_000_000, "exp": 1_800_003_600,
            "authorization": ["vehicleid": "v-42"],
        ]
        return InMemoryTokenBackend.jwt(header: header, payload: payload)
    }

    @Test(arguments: [["alg": "none"], ["alg": "NONE"], ["alg": "None", "typ": "JWT"], ["alg": ""], ["typ": "JWT"]])
    func anUnsignedTokenIsRefusedWhateverItsSignature(header: [String: String]) throws {
        let value = Self.token(header: header)
        #expect(!value.hasSuffix("."), "the token carries a signature part")
        let error = try #require(throws: FleetAuthError.self) {
            _ = try TokenResponseParser(format: .tokenOnly).token(
                from: Answers.json(["token": value]), for: .vehicle("v-42"), receivedAt: Answers.serverNow)
        }
        #expect(error.reason == .malformedToken)
        #expect(error.message.contains("unsigned"), "\(error.message)")
        #expect(try JWTDecoder.decode(value).isUnsigned)
    }

    @Test func aSignedTokenOfAnotherAlgorithmIsServed() throws {
        let value = Self.token(header: ["alg": "HS256", "typ": "JWT"])
        let token = try TokenResponseParser(format: .tokenOnly).token(
            from: Answers.json(["token": value]), for: .vehicle("v-42"), receivedAt: Answers.serverNow)
        #expect(token.scope == .vehicle("v-42"))
    }
}
