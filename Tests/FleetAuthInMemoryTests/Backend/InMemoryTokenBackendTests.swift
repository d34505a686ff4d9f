import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("In-memory token backend", .timeLimit(.minutes(10)))
struct InMemoryTokenBackendTests {
    @Test func mintsJWTShapedTokensWithFleetClaims() async throws {
        let clock = ManualWallClock()
        let backend = InMemoryTokenBackend(clock: clock, configuration: .init(lifetime: 900, keyID: "k-7"))
        let response = try await backend.respond(
            to: TransportRequest(url: URL(string: "https://b.example/token?vehicleId=v-42&taskId=t-1")!))
        #expect(response.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        let token = try #require(object["token"] as? String)
        #expect(token.split(separator: ".").count == 3)
        let claims = try JWTDecoder.decode(token)
        #expect(claims.algorithm == "RS256" && claims.keyID == "k-7")
        #expect(claims.authorization["vehicleid"] == ["v-42"])
        #expect(claims.authorization["taskid"] == ["t-1"])
        #expect(claims.issuedAt == Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down)))
        #expect(claims.issuedLifetime == 900)
        #expect(backend.mintedCount == 1)
    }

    @Test func tokensAreUniqueAndNameTheTripFromAJSONBody() async throws {
        let backend = InMemoryTokenBackend(configuration: .init(format: .plainText))
        let request = TransportRequest(
            method: "POST", url: URL(string: "https://b.example/token")!, body: Data(#"{"tripId":"t-7"}"#.utf8))
        let first = String(decoding: try await backend.respond(to: request).body, as: UTF8.self)
        let second = String(decoding: try await backend.respond(to: request).body, as: UTF8.self)
        #expect(AuthToken.fingerprint(of: first) != AuthToken.fingerprint(of: second))
        #expect(try JWTDecoder.decode(first).covers(.trip("t-7")))
    }

    @Test func requestWithoutAnIDIsA400() async throws {
        let backend = InMemoryTokenBackend()
        let response = try await backend.respond(to: TransportRequest(url: URL(string: "https://b.example/token")!))
        #expect(response.status == 400)
        #expect(backend.mintedCount == 0)
    }

    @Test func clockOffsetAndWildcardAreApplied() async throws {
        let clock = ManualWallClock()
        let backend = InMemoryTokenBackend(clock: clock, configuration: .init(clockOffset: 7200, mintsWildcard: true))
        let response = try await backend.respond(
            to: TransportRequest(url: URL(string: "https://b.example/t?tripId=t-1")!))
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        let claims = try JWTDecoder.decode(try #require(object["token"] as? String))
        #expect(claims.authorization["tripid"] == ["*"])
        #expect(try #require(claims.issuedAt).timeIntervalSince(clock.now()) > 7199)
        #expect(response.header("Date") == HTTPDate.format(clock.now().addingTimeInterval(7200)))
    }
}

@Suite("In-memory token backend: edited claims", .timeLimit(.minutes(10)))
struct InMemoryTokenBackendEditTests {
    @Test func payloadEditsReachTheToken() async throws {
        let backend = InMemoryTokenBackend(
            configuration: .init(editPayload: { scope, payload in
                payload["exp"] = nil
                payload["custom"] = "for \(scope.id)"
            }))
        let response = try await backend.respond(
            to: TransportRequest(url: URL(string: "https://b.example/t?vehicleId=v-1")!))
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        let token = try #require(object["token"] as? String)
        let payload = try #require(token.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode($0) })
        let claims = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(claims["exp"] == nil)
        #expect(claims["custom"] as? String == "for v-1")
    }

    @Test func everyConfigurationLabelReadsBackAndAChangeAppliesToTheNextToken() async throws {
        var configuration = InMemoryTokenBackend.Configuration(
            lifetime: 900, format: .plainText, clockOffset: -5, serviceAccount: "minter@test", audience: "aud-1",
            keyID: "k-2", mintsWildcard: true, sendsDateHeader: false, fleet: .delivery,
            editPayload: { _, payload in payload["extra"] = 1 })
        #expect(configuration.lifetime == 900)
        #expect(configuration.format == .plainText)
        #expect(configuration.clockOffset == -5)
        #expect(configuration.serviceAccount == "minter@test")
        #expect(configuration.audience == "aud-1")
        #expect(configuration.keyID == "k-2")
        #expect(configuration.mintsWildcard)
        #expect(configuration.sendsDateHeader == false)
        #expect(configuration.fleet == .delivery)
        #expect(configuration.editPayload != nil)

        let backend = InMemoryTokenBackend(clock: ManualWallClock(), configuration: configuration)
        configuration.keyID = "k-3"
        backend.configuration = configuration
        #expect(backend.configuration.keyID == "k-3")
        let response = try await backend.respond(
            to: TransportRequest(url: URL(string: "https://b.example/token?vehicleId=v-1")!))
        let claims = try JWTDecoder.decode(String(decoding: response.body, as: UTF8.self))
        #expect(claims.keyID == "k-3")
    }
}

/// Tokens and answers are written without `JSONSerialization` unless a test edits the
/// payload: both ways must read the same, whatever the IDs and the format hold.
@Suite("In-memory token backend: the JSON it writes", .timeLimit(.minutes(10)))
struct InMemoryTokenBackendJSONTests {
    static let queries = [
        "vehicleId=v-42", "vehicleId=v-42&taskId=t-1", "tripId=t-7", "trackingId=tr-1", "taskId=t-9",
        "vehicleId=%22quoted%22%5Cback%2Fslash", "vehicleId=line%0Abreak%01", "vehicleId=%E8%BB%8A%E4%B8%A1",
    ]

    @Test(arguments: queries, [FleetFlavor.onDemand, .delivery])
    func aTokenReadsTheSameAsOneWrittenByJSONSerialization(query: String, fleet: FleetFlavor) async throws {
        func backend(editing: Bool) -> InMemoryTokenBackend {
            var configuration = InMemoryTokenBackend.Configuration(format: .plainText, fleet: fleet)
            if editing { configuration.editPayload = { _, _ in } }
            return InMemoryTokenBackend(clock: ManualWallClock(), configuration: configuration)
        }
        let request = TransportRequest(url: URL(string: "https://b.example/token?\(query)")!)
        let written = String(decoding: try await backend(editing: false).respond(to: request).body, as: UTF8.self)
        let serialized = String(decoding: try await backend(editing: true).respond(to: request).body, as: UTF8.self)
        let writtenParts = written.split(separator: ".", omittingEmptySubsequences: false)
        let serializedParts = serialized.split(separator: ".", omittingEmptySubsequences: false)
        #expect(writtenParts.count == 3 && serializedParts.count == 3)
        // The header and the payload; the signature is a fixed placeholder either way.
        for (part, expected) in zip(writtenParts, serializedParts).prefix(2) {
            let object = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(part))) as? NSDictionary
            let expectedObject =
                try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(expected))) as? NSDictionary
            #expect(object != nil && object == expectedObject)
        }
        #expect(try JWTDecoder.decode(written).authorization == JWTDecoder.decode(serialized).authorization)
    }

    @Test(arguments: [
        TokenResponseFormat.tokenOnly, .jwtWithExpirationTimestamp, .tokenWithExpirationTimestampMilliseconds,
        .tokenWithExpiresInSeconds, .swiftSample(), .objectiveCSample(tokenKey: "access\"token", expirationKey: "exp"),
        .swiftSample(tokenKey: "token", expirationKey: "token"),
    ])
    func anAnswerHoldsTheTokenAndExpiryTheFormatNames(format: TokenResponseFormat) async throws {
        let clock = ManualWallClock()
        let backend = InMemoryTokenBackend(clock: clock, configuration: .init(lifetime: 900, format: format))
        let response = try await backend.respond(
            to: TransportRequest(url: URL(string: "https://b.example/token?vehicleId=v-1")!))
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        guard case .json(let tokenKey, let expiry) = format.body else {
            Issue.record("not a JSON format")
            return
        }
        let issued = clock.now().timeIntervalSince1970.rounded(.down)
        if let expiry {
            let expected: Int64 =
                switch expiry.unit {
                case .absoluteSeconds: Int64(issued + 900)
                case .absoluteMilliseconds: Int64((issued + 900) * 1000)
                default: 900
                }
            #expect(object[expiry.key] as? Int64 == expected)
        }
        if expiry?.key != tokenKey {
            #expect(object[tokenKey] as? String == backend.issuedTokens.last)
        }
        #expect(object.count == Set([tokenKey, expiry?.key].compactMap { $0 }).count)
    }
}
