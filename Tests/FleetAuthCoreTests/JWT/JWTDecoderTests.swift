import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("JWT decoding", .timeLimit(.minutes(10)))
struct JWTDecoderTests {
    @Test func decodesFleetClaims() throws {
        let token = InMemoryTokenBackend.jwt(
            header: ["alg": "RS256", "typ": "JWT", "kid": "k1"],
            payload: [
                "iss": "minter@example", "sub": "minter@example", "aud": "fleet", "iat": 1_800_000_000,
                "exp": 1_800_003_600, "authorization": ["vehicleid": "v-42", "taskids": ["t-1", "t-2"]],
            ])
        let claims = try JWTDecoder.decode(token)
        #expect(claims.algorithm == "RS256")
        #expect(claims.keyID == "k1")
        #expect(claims.issuer == "minter@example")
        #expect(claims.audience == ["fleet"])
        #expect(claims.issuedAt == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(claims.issuedLifetime == 3600)
        #expect(claims.authorization["vehicleid"] == ["v-42"])
        #expect(claims.authorization["taskids"] == ["t-1", "t-2"])
    }

    @Test func audienceListIsRead() throws {
        let claims = try JWTDecoder.decode(InMemoryTokenBackend.jwt(payload: ["aud": ["a", "b"], "exp": 1]))
        #expect(claims.audience == ["a", "b"])
    }

    static let malformed: [MalformedToken] = [
        MalformedToken("empty", ""),
        MalformedToken("two parts", "abc.def"),
        MalformedToken("four parts", "a.b.c.d"),
        MalformedToken(
            "empty signature",
            InMemoryTokenBackend.jwt(payload: ["exp": 1]).split(separator: ".").prefix(2).joined(separator: ".") + "."
        ),
        MalformedToken("header not base64url", "%%%.eyJleHAiOjF9.c2ln"),
        MalformedToken("payload not base64url", "eyJhbGciOiJSUzI1NiJ9.***.c2ln"),
        MalformedToken("payload not JSON", "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(Data("not json".utf8)) + ".c2ln"),
        MalformedToken("payload is an array", "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(Data("[1,2]".utf8)) + ".c2ln"),
        MalformedToken("exp is a string", InMemoryTokenBackend.jwt(payload: ["exp": "1800000000"])),
        MalformedToken("exp is a boolean", InMemoryTokenBackend.jwt(payload: ["exp": true])),
        MalformedToken("exp is negative", InMemoryTokenBackend.jwt(payload: ["exp": -5])),
        MalformedToken("exp is huge", InMemoryTokenBackend.jwt(payload: ["exp": 1e300])),
        MalformedToken("iat is an object", InMemoryTokenBackend.jwt(payload: ["exp": 1, "iat": ["a": 1]])),
        MalformedToken("aud is a number", InMemoryTokenBackend.jwt(payload: ["exp": 1, "aud": 7])),
        MalformedToken("aud list holds a number", InMemoryTokenBackend.jwt(payload: ["exp": 1, "aud": ["a", 7]])),
        MalformedToken(
            "authorization is a string", InMemoryTokenBackend.jwt(payload: ["exp": 1, "authorization": "v-42"])),
        MalformedToken("iss is a number", InMemoryTokenBackend.jwt(payload: ["exp": 1, "iss": 3])),
        MalformedToken("too long", String(repeating: "a", count: JWTDecoder.maximumTokenLength + 1)),
        MalformedToken("whitespace inside", " " + InMemoryTokenBackend.jwt(payload: ["exp": 1])),
        // The signature is checked as base64url though never read: each of these would break
        // the `Authorization` header (CR LF made FoundationNetworking drop it whole).
        MalformedToken("signature with a space", signed(" sig")),
        MalformedToken("signature with a tab", signed("si\tg")),
        MalformedToken("signature with CR LF", signed("sig\r\nX-Injected: 1")),
        MalformedToken("signature with non-ASCII", signed("sïg")),
        MalformedToken("signature in plain base64", signed("ab+/")),
        MalformedToken("signature of impossible length", signed("abcde")),
        MalformedToken("signature of padding only", signed("====")),
        MalformedToken("signature with three padding characters", signed("ab======")),
    ]

    /// A token whose header and payload are sound, with `signature` after the second dot.
    static func signed(_ signature: String) -> String {
        InMemoryTokenBackend.jwt(payload: ["exp": 1]).split(separator: ".").prefix(2).joined(separator: ".") + "."
            + signature
    }

    /// A malformed token with a name; test output shows only the name.
    struct MalformedToken: CustomTestStringConvertible, Sendable {
        let name: String
        let token: String
        init(_ name: String, _ token: String) {
            self.name = name
            self.token = token
        }
        var testDescription: String { name }
    }

    @Test(arguments: malformed)
    func malformedTokensAreTypedErrors(malformed: MalformedToken) {
        let (name, token) = (malformed.name, malformed.token)
        #expect(throws: FleetAuthError.self, "\(name)") {
            try JWTDecoder.decode(token)
        }
        do {
            _ = try JWTDecoder.decode(token)
        } catch {
            #expect(error.reason == .malformedToken)
            if token.count > 8 { #expect(!error.message.contains(token)) }
        }
    }

    @Test(arguments: [
        ("vehicleid", "v-42", AuthorizationScope.vehicle("v-42"), true),
        ("vehicleid", "*", .vehicle("v-42"), true),
        ("VehicleID", "v-42", .vehicle("v-42"), true),
        ("deliveryvehicleid", "v-42", .vehicle("v-42"), true),
        ("vehicleid", "v-43", .vehicle("v-42"), false),
        ("tripid", "v-42", .vehicle("v-42"), false),
        ("tripid", "t-7", .trip("t-7"), true),
        ("tripid", "*", .trip("t-7"), true),
        ("vehicleid", "t-7", .trip("t-7"), false),
    ])
    func authorizationCoversScope(key: String, id: String, scope: AuthorizationScope, covered: Bool) {
        let claims = JWTClaims(authorization: [key: [id]])
        #expect(claims.covers(scope) == covered)
    }

    @Test func base64URLRoundTripsEveryLength() {
        for length in 0..<40 {
            let data = Data((0..<length).map { UInt8(($0 * 37 + 250) % 256) })
            let encoded = Base64URL.encode(data)
            let base64 = data.base64EncodedString()
            #expect(encoded == base64.replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: ""))
            #expect(Base64URL.decode(encoded[...]) == data)
        }
    }

    @Test(arguments: [
        ("YQ", "a"), ("YQ==", "a"), ("YWI", "ab"), ("YWI=", "ab"), ("YWJj", "abc"), ("", ""), ("-_8", "\u{FB}\u{FF}"),
    ])
    func base64URLDecodesPaddedAndUnpaddedText(text: String, expected: String) {
        #expect(Base64URL.decode(text[...]) == Data(expected.unicodeScalars.map { UInt8($0.value) }))
    }

    @Test(arguments: ["Y", "YQ=", "YQ===", "Y===", "YQ=a", "a+b", "a/b", "YW I", "=", "é"])
    func base64URLRefusesWhatIsNotBase64URL(text: String) {
        #expect(Base64URL.decode(text[...]) == nil)
    }
}
