import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// A refusal names the exact setting to change, and what really happened: the audience
/// setting, a credential never sent, a provider pointed at another kind's route.
@Suite("Messages name the setting and the truth", .timeLimit(.minutes(10)))
struct SettingAndTruthMessageTests {
    let now = Answers.serverNow

    func failure(
        _ response: TransportResponse, scope: AuthorizationScope, rules: TokenRules = TokenRules(),
        credentialSent: Bool? = nil
    ) -> FleetAuthError? {
        do {
            _ = try TokenResponseParser(format: .tokenOnly, rules: rules).token(
                from: response, for: scope, receivedAt: now, credentialSent: credentialSent)
            return nil
        } catch {
            return error
        }
    }

    /// Another audience names `TokenRules(expectedAudience:)`, with the token's own audience.
    @Test func anotherAudienceNamesTheSetting() throws {
        let token = Answers.jwt(extra: ["aud": "https://fleet.test.example/"])
        let error = try #require(failure(Answers.json(["token": token]), scope: .vehicle("v-42")))
        #expect(error.reason == .audienceMismatch)
        #expect(
            error.message.hasSuffix(
                #"mint it for that audience, or, if your fleet service expects "https://fleet.test.example/", set `TokenRules(expectedAudience: "https://fleet.test.example/")`."#
            ), "\(error.message)")
        let none = try #require(
            failure(Answers.json(["token": Answers.jwt(extra: ["aud": [String]()])]), scope: .vehicle("v-42")))
        #expect(none.message.contains("set it with `TokenRules(expectedAudience:)`"), "\(none.message)")
    }

    /// A 401 after no credential was sent says so, and one after a credential was sent says
    /// the backend refused it.
    @Test func a401TellsNoCredentialFromARefusedOne() throws {
        let answer = Answers.raw(Data(#"{"error":"unauthorized"}"#.utf8), status: 401)
        let none = try #require(failure(answer, scope: .vehicle("v-42"), credentialSent: false))
        #expect(
            none.message.hasPrefix(
                "The backend answered HTTP 401: no credential was sent (the TokenEndpoint's `headers` closure sent no Authorization header);"
            ), "\(none.message)")
        let refused = try #require(failure(answer, scope: .vehicle("v-42"), credentialSent: true))
        #expect(
            refused.message.hasPrefix("The backend answered HTTP 401: the backend refused the credential it was sent;"),
            "\(refused.message)")
        #expect(!refused.message.contains("no credential was sent"))
    }

    /// Through the engine: what the endpoint's `headers` closure returned decides the message.
    @Test(arguments: [
        ([String: String](), "no credential was sent"), (["X-App-Version": "3.1"], "no credential was sent"),
        (["Authorization": "Bearer stale"], "the backend refused the credential it was sent"),
        (["X-Api-Key": "k-1"], "the backend refused the credential it was sent"),
    ])
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func theEngineTellsTheParserWhetherACredentialWasSent(headers: [String: String], said: String) async throws {
        let clock = ManualWallClock(now: now)
        let transport = InMemoryTransport(clock: clock)
        transport.route("/token") { _ in TransportResponse(status: 401, body: Data(#"{"error":"no"}"#.utf8)) }
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token", headers: { _ in headers }),
                transport: transport, clock: clock, retry: RetryPolicy(maximumAttempts: 1, failureCooldown: 0)))
        do {
            _ = try await clock.atOnce { try await engine.token(for: .vehicle("v-42")) }
            Issue.record("a 401 must fail the fetch")
        } catch let error as FleetAuthError {
            #expect(error.message.contains("HTTP 401: \(said)"), "\(error.message)")
            #expect(!error.message.contains("stale"))
        }
    }

    /// A consumer provider pointed at the driver route gets a vehicle token for its trip's ID:
    /// the message names the route, not a wrong ID. And the reverse, for both fleets.
    @Test(arguments: [
        (
            AuthorizationScope.trip("t-7"), "vehicleid", FleetFlavor.onDemand,
            #"The token is a vehicle token for this ID (vehicleid: "t-7"), not a trip token: the URL looks like a driver token route; a consumer provider needs the consumer token route, whose tokens name the trip under `tripid`."#
        ),
        (
            .vehicle("t-7"), "tripid", .onDemand,
            #"The token is a trip token for this ID (tripid: "t-7"), not a vehicle token: the URL looks like a consumer token route; a driver provider needs the driver token route, whose tokens name the vehicle under `vehicleid`."#
        ),
        (
            .vehicle("s-1"), "trackingid", .delivery,
            #"The token is a tracking ID token for this ID (trackingid: "s-1"), not a vehicle token: the URL looks like a delivery consumer (tracking ID) token route; a driver provider needs the driver token route, whose tokens name the vehicle under `deliveryvehicleid`."#
        ),
        (
            .tracking("dv-1"), "deliveryvehicleid", .onDemand,
            #"The token is a vehicle token for this ID (deliveryvehicleid: "dv-1"), not a tracking ID token: the URL looks like a driver token route; a consumer provider following a tracking ID needs the delivery consumer (tracking ID) token route, whose tokens name the tracking ID under `trackingid`."#
        ),
    ])
    func aTokenOfAnotherKindForTheIDNamesTheRoute(
        scope: AuthorizationScope, key: String, fleet: FleetFlavor, message: String
    ) throws {
        let token = Answers.jwt(id: scope.id, key: key)
        let error = try #require(
            failure(Answers.json(["token": token]), scope: scope, rules: TokenRules(fleet: fleet)))
        #expect(error.reason == .scopeMismatch)
        #expect(error.message.hasPrefix(message), "\(error.message)")
        #expect(!error.message.contains("Mint the token for the ID in the request"))
    }

    /// A token of another kind for another ID is still a token for another ID.
    @Test func aTokenOfAnotherKindForAnotherIDNamesTheIDs() throws {
        let token = Answers.jwt(id: "v-1", key: "vehicleid")
        let error = try #require(failure(Answers.json(["token": token]), scope: .trip("t-7")))
        #expect(error.message.contains("Mint the token for the ID in the request."), "\(error.message)")
        #expect(!error.message.contains("route"))
    }
}
