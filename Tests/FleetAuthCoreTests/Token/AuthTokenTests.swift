import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Redaction of token values", .timeLimit(.minutes(10)))
struct AuthTokenTests {
    let secret = InMemoryTokenBackend.jwt(payload: ["exp": 1_800_003_600, "authorization": ["vehicleid": "v-1"]])

    var token: AuthToken {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        return AuthToken(
            value: secret, scope: .vehicle("v-1"), receivedAt: now,
            expiresAt: now.addingTimeInterval(3600), lifetime: 3600)
    }

    /// The three base64url parts of the secret; none may appear in any rendering.
    var secretParts: [String] { secret.split(separator: ".").map(String.init) + [secret] }

    @Test func descriptionsShowOnlyTheFingerprint() {
        var dumped = ""
        dump(token, to: &dumped)
        let renderings = [
            token.description, String(describing: token), String(reflecting: token), dumped,
            "\(token)", String(describing: Mirror(reflecting: token).children.map(\.value)),
        ]
        for rendering in renderings {
            #expect(rendering.contains(token.fingerprint), "\(rendering)")
            for part in secretParts { #expect(!rendering.contains(part), "\(rendering)") }
        }
    }

    #if canImport(Glibc)
        /// Each vehicle of a simulator holds a token: its storage stays in the allocator's
        /// 176-byte block, with an uptime expiry too (the largest form); its `Bearer` header is
        /// made for each call, not kept beside its value.
        @Test func aTokensStorageFitsA176ByteBlock() throws {
            let fetched = AuthToken(
                value: secret, scope: .vehicle("v-1"), receivedAt: Date(), expiresAt: Date(),
                uptimeExpiry: (SystemWallClock(), 10), issuerClockOffset: 1)
            let usableSize = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size"))
            let size = unsafeBitCast(usableSize, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
            #expect(size(Unmanaged.passUnretained(fetched.storageObject).toOpaque()) <= 168)
            #expect(fetched.authorizationHeader == "Bearer \(secret)")
            #expect(fetched.value == secret)
        }
    #endif

    /// A token and its copies are one token; another made with the same fields is equal, not
    /// identical.
    @Test func aCopyIsIdenticalAndAnEqualTokenIsNot() {
        let first = token
        let copy = first
        let equal = token
        #expect(copy.isIdentical(to: first) && first == copy)
        #expect(equal == first)
        #expect(!equal.isIdentical(to: first))
    }

    @Test func fingerprintIsStableAndShort() {
        #expect(token.fingerprint == AuthToken.fingerprint(of: secret))
        #expect(token.fingerprint.count == 12)
        #expect(token.fingerprint.hasPrefix("tok_"))
        #expect(AuthToken.fingerprint(of: secret + "x") != token.fingerprint)
        // The top 32 bits of 64-bit FNV-1a, so that a tag in yesterday's logs still matches.
        #expect(AuthToken.fingerprint(of: "") == "tok_cbf29ce4")
        #expect(AuthToken.fingerprint(of: "a") == "tok_af63dc4c")
        #expect(AuthToken.fingerprint(of: "foobar") == "tok_85944171")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func eventsNeverCarryTheValue() async throws {
        let h = try EngineHarness()
        let fetched = try await h.engine.token(for: .vehicle("v-9"))
        _ = try await h.engine.token(for: .vehicle("v-9"))
        h.engine.invalidate(fetched.value, for: .vehicle("v-9"))
        h.engine.invalidateAll()
        #expect(h.events.all.count >= 5)
        for description in h.events.descriptions {
            for part in fetched.value.split(separator: ".") { #expect(!description.contains(part)) }
        }
    }

    /// Every query value is hidden, whatever its name: a deny list of names would let `sid`,
    /// `hash` or `otp` through. `dump` shows what the description shows.
    @Test func errorsShowTheURLAsSentButNoSecretInIt() {
        let error = FleetAuthError(
            reason: .unexpectedStatus, message: "The backend answered HTTP 500.", scope: .vehicle("v-1"),
            url: URL(
                string:
                    "https://user:pw@api.example.com/token?vehicleId=v-1&key=secret-api-key&X-Auth=s3&sid=s3ssion#frag"),
            status: 500, underlyingError: URLError(.badServerResponse))
        #expect(
            error.description
                == "FleetAuthError.unexpectedStatus (vehicle v-1, HTTP 500, https://api.example.com/token?vehicleId=hidden&key=hidden&X-Auth=hidden&sid=hidden): The backend answered HTTP 500."
        )
        var dumped = ""
        dump(error, to: &dumped)
        for shown in [error.description, String(reflecting: error), dumped] {
            for secret in ["s3", "secret-api-key", "s3ssion", "user", "pw@", "frag"] {
                #expect(!shown.contains(secret), "\(secret) in \(shown)")
            }
        }
        #expect(dumped.contains("https://api.example.com/token?vehicleId=hidden"), "\(dumped)")
        #expect(error.localizedDescription.contains("unexpectedStatus"))
    }

    @Test(arguments: [
        (FleetAuthError.Reason.transportFailure, nil as Int?, true), (.timedOut, nil, true),
        (.unexpectedStatus, 500, true), (.unexpectedStatus, 503, true), (.unexpectedStatus, 429, true),
        (.unexpectedStatus, 408, true), (.unexpectedStatus, 400, false), (.unexpectedStatus, 401, false),
        (.unexpectedStatus, 404, false), (.malformedResponse, 200, false), (.scopeMismatch, 200, false),
        (.redirectRefused, 302, false),
    ])
    func transientClassification(code: FleetAuthError.Reason, status: Int?, transient: Bool) {
        #expect(FleetAuthError(reason: code, message: "m", status: status).isTransient == transient)
    }

    @Test(arguments: [
        (FleetAuthError.Reason.missingContext, FleetAuthError.Code.invalidContext),
        (.insecureEndpoint, .invalidConfiguration), (.redirectRefused, .transportFailure),
        (.responseTooLarge, .malformedResponse), (.malformedToken, .malformedResponse),
        (.missingExpiry, .malformedResponse), (.expiryMismatch, .malformedResponse),
        (.lifetimeTooLong, .malformedResponse), (.emptyProviderResponse, .malformedResponse),
        (.scopeMismatch, .tokenMismatch), (.fleetMismatch, .tokenMismatch), (.audienceMismatch, .tokenMismatch),
        (.wildcardRefused, .tokenMismatch), (.rejectedTokenReissued, .tokenMismatch),
        (.lifetimeTooShort, .tokenExpired), (.credentialsUnavailable, .credentialsUnavailable),
        (.timedOut, .timedOut), (.signedOut, .signedOut),
    ])
    func eachReasonFallsUnderTheCodeAnAppActsOn(reason: FleetAuthError.Reason, code: FleetAuthError.Code) {
        let error = FleetAuthError(reason: reason, message: "m")
        #expect(error.code == code)
        // The log line starts with the code an app matches on, then the exact cause.
        let named = "\(reason)" == "\(code)" ? "\(code)" : "\(code)/\(reason)"
        #expect(error.description.hasPrefix("FleetAuthError.\(named): "))
    }

    @Test(arguments: [
        FleetAuthError.Code.invalidContext, .invalidConfiguration, .credentialsUnavailable, .transportFailure,
        .timedOut, .unexpectedStatus, .malformedResponse, .tokenMismatch, .tokenExpired, .signedOut,
    ])
    func anErrorAnAppCreatesKeepsItsCode(code: FleetAuthError.Code) {
        let error = FleetAuthError(code: code, message: "no token for you")
        #expect(error.code == code)
        #expect(error.description == "FleetAuthError.\(code): no token for you")
    }

    @Test(arguments: [
        (AuthorizationScope.vehicle("v-1"), true), (.vehicle(""), false), (.vehicle(" v"), false),
        (.vehicle("v\u{0}"), false), (.vehicle("v-1", taskID: ""), false), (.trip("t-é 7"), true),
        (.vehicle(String(repeating: "v", count: 64)), true), (.vehicle(String(repeating: "v", count: 65)), false),
        (.vehicle("v/1"), false), (.vehicle("v:1"), false), (.vehicle("v?1"), false), (.vehicle("v,1"), false),
        (.vehicle("v#1"), false), (.vehicle("v-1 "), false), (.vehicle("v-1", taskID: "t/1"), false),
        (.vehicle("v-1", taskID: "t-1"), true),
    ])
    func scopeValidation(scope: AuthorizationScope, valid: Bool) {
        #expect(((try? scope.validated()) != nil) == valid)
    }

    @Test func claimsAreDecodedOnceAndSharedByEveryCopyAndThread() async {
        let value = InMemoryTokenBackend.jwt(payload: ["iat": 1_800_000_000, "exp": 1_800_003_600, "aud": "fleet"])
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = AuthToken(
            value: value, scope: .vehicle("v-1"), receivedAt: now, expiresAt: now.addingTimeInterval(3600),
            lifetime: 3600)
        let audiences = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<64 { group.addTask { token.claims.audience } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(audiences.count == 64 && audiences.allSatisfy { $0 == ["fleet"] })
        #expect(token.claims.expiresAt == Date(timeIntervalSince1970: 1_800_003_600))
        let opaque = AuthToken(value: "opaque", scope: .vehicle("v-1"), receivedAt: now, expiresAt: now, lifetime: 0)
        #expect(opaque.claims == JWTClaims())
    }
}

@Suite("The fleet service's ID rules and task claims", .timeLimit(.minutes(10)))
struct IDRulesTests {
    @Test(arguments: [
        ("v/1", "`/`"), ("v:1", "`:`"), ("v?1", "`?`"), ("v,1", "`,`"), ("v#1", "`#`"),
        (String(repeating: "v", count: 65), "at most 64"), ("", "is empty"), (".", "path step"), ("..", "path step"),
    ])
    func anIDThatBreaksARuleIsAnInvalidContextNamingIt(id: String, rule: String) {
        do {
            _ = try AuthorizationScope.vehicle(id).validated()
            Issue.record("\(id) was accepted")
        } catch {
            #expect(error.reason == .invalidContext)
            #expect(error.message.contains(rule), "\(error.message)")
        }
        #expect(throws: FleetAuthError.self) { try AuthorizationScope.vehicle("v-1", taskID: id).validated() }
    }

    /// Dots are fine inside an ID; only an ID that is a whole dot segment is refused.
    @Test func onlyWholeDotSegmentsAreRefused() throws {
        for id in ["...", ".v", "v.", "v..1", "%2e%2e"] { _ = try AuthorizationScope.vehicle(id).validated() }
    }

    /// An ID with CR LF cannot forge a log line: the scope's description, the error's
    /// description and its localized description show the characters escaped.
    @Test func controlCharactersOfAnIDAreEscapedInEveryDescription() {
        let scope = AuthorizationScope.vehicle("a\r\nX-Injected: 1")
        let error = #expect(throws: FleetAuthError.self) { try scope.validated() }
        let texts = [scope.description, error?.description ?? "", error?.localizedDescription ?? ""]
        for text in texts {
            #expect(!text.contains("\r") && !text.contains("\n"), "\(text)")
            #expect(text.contains(#"a\r\nX-Injected: 1"#), "\(text)")
        }
        #expect("tab\there\u{202E}".escapingControlCharacters == #"tab\there\u{202E}"#)
        #expect("plain".escapingControlCharacters == "plain")
    }

    /// Text a backend chose (a claim, a redirect's target) loses every header value sent:
    /// whole, the credential after its scheme, a Basic credential's decoded pair and its
    /// long parts; ordinary words stay.
    @Test func textFromABackendLosesEverySentValue() {
        let sent = ["Bearer op-cred-123", "Basic dXNlcjpwYXNzd29yZDE=", "key-9"]
        let echoed = "iss op-cred-123, kid dXNlcjpwYXNzd29yZDE=, sub user:password1, aud password1, key key-9 of user"
        #expect(echoed.hiding(sent) == "iss <hidden>, kid <hidden>, sub <hidden>, aud <hidden>, key <hidden> of user")
        let error = FleetAuthError(reason: .scopeMismatch, message: "The token names vehicle op-cred-123.")
        #expect(error.hiding(sent).message == "The token names vehicle <hidden>.")
    }

    @Test func sixtyFourCharactersAreAccepted() throws {
        _ = try AuthorizationScope.vehicle(String(repeating: "é", count: 64)).validated()
    }

    @Test func anIDTypedTwoWaysIsOneScope() {
        let composed = AuthorizationScope.vehicle("caf\u{E9}")
        let decomposed = AuthorizationScope.vehicle("cafe\u{301}")
        #expect(composed == decomposed && composed.hashValue == decomposed.hashValue)
        #expect(decomposed.id.unicodeScalars.count == 4)
    }

    @Test(
        arguments: [
            (["deliveryvehicleid": ["v-1"]], true),  // a vehicle-level token serves the vehicle's tasks
            (["deliveryvehicleid": ["v-1"], "taskid": ["t-1"]], true),
            (["deliveryvehicleid": ["v-1"], "taskid": ["t-2"]], false),
            (["deliveryvehicleid": ["v-1"], "taskids": ["t-2", "t-1"]], true),
            (["deliveryvehicleid": ["v-1"], "taskids": ["t-2", "t-3"]], false),
            (["deliveryvehicleid": ["v-1"], "taskids": ["*"]], true),
            (["deliveryvehicleid": ["v-2"], "taskids": ["t-1"]], false),
        ] as [([String: [String]], Bool)])
    func taskClaimsCoverTheTaskTheyName(authorization: [String: [String]], covered: Bool) {
        #expect(JWTClaims(authorization: authorization).covers(.vehicle("v-1", taskID: "t-1")) == covered)
    }

    @Test func aTaskidsArrayIsReadFromTheToken() throws {
        let token = InMemoryTokenBackend.jwt(payload: [
            "exp": 1, "authorization": ["deliveryvehicleid": "v-1", "taskids": ["t-1", "t-2"]],
        ])
        let claims = try JWTDecoder.decode(token)
        #expect(claims.authorization["taskids"] == ["t-1", "t-2"])
        #expect(claims.covers(.vehicle("v-1", taskID: "t-2")) && !claims.covers(.vehicle("v-1", taskID: "t-3")))
    }
}
