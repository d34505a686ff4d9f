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
