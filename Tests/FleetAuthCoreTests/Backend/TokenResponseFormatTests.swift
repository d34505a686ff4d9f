import FleetAuthCore
import Testing

/// Formats compare and hash by the body they read; their name is only what they show.
@Suite("Token response formats: equality by the body read", .timeLimit(.minutes(10)))
struct TokenResponseFormatTests {
    /// Pairs that read the same body under different names.
    static let sameBody: [(TokenResponseFormat, TokenResponseFormat)] = [
        (.tokenOnly, .json(tokenKey: "token")),
        (
            .jwtWithExpirationTimestamp,
            .json(tokenKey: "jwt", expiryKey: "expirationTimestamp", expiryUnit: .absoluteMilliseconds)
        ),
        (.swiftSample(), .json(tokenKey: "token", expiryKey: "expiration", expiryUnit: .absoluteSeconds)),
        (.objectiveCSample(), .json(tokenKey: "token", expiryKey: "expiration", expiryUnit: .secondsFromNow)),
    ]

    @Test(arguments: sameBody)
    func formatsReadingTheSameBodyAreEqualAndHashAlike(named: TokenResponseFormat, built: TokenResponseFormat) {
        #expect(named == built)
        #expect(named.hashValue == built.hashValue)
        #expect(Set([named, built]).count == 1)
        #expect(named.description != built.description)
    }

    /// Pairs that differ in one thing the parser reads.
    static let differentBody: [(TokenResponseFormat, TokenResponseFormat)] = [
        (.tokenOnly, .plainText),
        (.tokenOnly, .json(tokenKey: "jwt")),
        (.swiftSample(), .objectiveCSample()),
        (.swiftSample(), .swiftSample(expirationKey: "exp")),
        (.json(tokenKey: "token", expiryKey: "e"), .json(tokenKey: "token")),
    ]

    @Test(arguments: differentBody)
    func formatsReadingDifferentBodiesDiffer(one: TokenResponseFormat, other: TokenResponseFormat) {
        #expect(one != other)
        #expect(Set([one, other]).count == 2)
    }

    @Test func theDescriptionIsTheFormatsName() {
        #expect(
            TokenResponseFormat.jwtWithExpirationTimestamp.description == "{jwt, expirationTimestamp in absolute ms}")
        #expect(TokenResponseFormat.plainText.description == "plain-text JWT")
        #expect("\(TokenResponseFormat.json(tokenKey: "accessToken"))" == "accessToken + JWT exp")
        #expect(
            TokenResponseFormat.json(tokenKey: "t", expiryKey: "e", expiryUnit: .secondsFromNow).description
                == "t + e (seconds from now)")
    }
}
