import FleetAuthCore
import FleetAuthFleetService
import FleetAuthInMemory
import Foundation
import Testing

@Suite("In-memory fleet service checks tokens like the real one", .timeLimit(.minutes(10)))
struct InMemoryFleetServiceTests {
    let clock = ManualWallClock()
    var now: Double { clock.now().timeIntervalSince1970 }

    func token(_ edit: (inout [String: Any]) -> Void = { _ in }) -> String {
        var payload: [String: Any] = [
            "aud": TokenRules.fleetServiceAudience, "iat": now, "exp": now + 3600,
            "authorization": ["vehicleid": "v-1"],
        ]
        edit(&payload)
        return InMemoryTokenBackend.jwt(payload: payload)
    }

    func put(_ bearer: String?, path: String = "/v1/providers/demo-project/vehicles/v-1") async
        -> InMemoryFleetService.Call
    {
        await put(authorization: bearer.map { "Bearer \($0)" }, path: path)
    }

    func put(authorization: String?, path: String = "/v1/providers/demo-project/vehicles/v-1") async
        -> InMemoryFleetService.Call
    {
        let service = InMemoryFleetService(clock: clock)
        var headers: [String: String] = [:]
        if let authorization { headers["Authorization"] = authorization }
        _ = await service.respond(
            to: TransportRequest(
                method: "PUT", url: URL(string: "https://fleet.example.com\(path)")!, headers: headers,
                body: Data(#"{"lastLocation":{}}"#.utf8)))
        return service.calls[0]
    }

    @Test func aValidTokenIsAccepted() async {
        let call = await put(token())
        #expect(call.accepted && call.status == 200 && call.scope == .vehicle("v-1"))
    }

    @Test(arguments: [
        ("no token", nil as String?, 401),
        ("not a JWT", "opaque", 401),
    ])
    func missingOrMalformedTokens(name: String, bearer: String?, status: Int) async {
        let call = await put(bearer)
        #expect(call.status == status && !call.accepted, "\(name)")
    }

    /// The scheme is `Bearer` in any case, then one space and the token; any other form is
    /// no bearer token at all.
    @Test func theBearerSchemeIsReadInAnyCaseAndNoOtherForm() async {
        let token = token()
        for scheme in ["Bearer ", "bearer ", "BEARER ", "bEaReR "] {
            let call = await put(authorization: scheme + token)
            #expect(call.accepted, "\(scheme)")
        }
        for header in ["Bearer", "Bearer ", "Bearerx \(token)", "Bearer\u{0}\(token)", "Basic \(token)", "\(token)"] {
            let call = await put(authorization: header)
            #expect(call.status == 401 && call.rejection == "no bearer token", "\(header.prefix(9))")
        }
        // A second space is the token's first byte: no longer the token minted.
        let spaced = await put(authorization: "Bearer  " + token)
        #expect(spaced.status == 401 && spaced.rejection == "malformed token")
    }

    /// An accepted update is answered with the update, named as the resource it updated.
    @Test func anAcceptedUpdateIsAnsweredNamed() async {
        let service = InMemoryFleetService(clock: clock)
        let response = await service.respond(
            to: TransportRequest(
                method: "PUT", url: URL(string: "https://fleet.example.com/v1/providers/demo-project/vehicles/v-1")!,
                headers: ["Authorization": "Bearer \(token())"], body: Data(#"{"lastLocation":{"speed":1}}"#.utf8)))
        #expect(response.status == 200)
        let answer = String(decoding: response.body, as: UTF8.self)
        #expect(answer == #"{"name":"providers/demo-project/vehicles/v-1","lastLocation":{"speed":1}}"#)
    }

    /// A token the service knows already names each call's own resource: one wildcard token
    /// for two vehicles, each called twice, and a delivery vehicle's path beside them.
    @Test func aKnownTokenNamesEachCallsOwnResource() async {
        let service = InMemoryFleetService(clock: clock)
        let bearer = "Bearer \(token { $0["authorization"] = ["vehicleid": "*", "deliveryvehicleid": "*"] })"
        var names: [String] = []
        for (method, path) in [
            ("PUT", "vehicles/v-1"), ("PUT", "vehicles/v-2"), ("PUT", "vehicles/v-1"), ("PUT", "vehicles/v-2"),
            ("PATCH", "deliveryVehicles/v-1"), ("PATCH", "deliveryVehicles/v-1"),
        ] {
            let response = await service.respond(
                to: TransportRequest(
                    method: method, url: URL(string: "https://fleet.example.com/v1/providers/demo-project/\(path)")!,
                    headers: ["Authorization": bearer], body: Data(#"{"lastLocation":{}}"#.utf8)))
            let answer = String(decoding: response.body, as: UTF8.self)
            names.append(answer.components(separatedBy: "\"").dropFirst(3).first ?? answer)
        }
        #expect(
            names == [
                "providers/demo-project/vehicles/v-1", "providers/demo-project/vehicles/v-2",
                "providers/demo-project/vehicles/v-1", "providers/demo-project/vehicles/v-2",
                "providers/demo-project/deliveryVehicles/v-1", "providers/demo-project/deliveryVehicles/v-1",
            ])
    }

    @Test func everyClaimRuleRejects() async {
        let cases: [(String, (inout [String: Any]) -> Void, Int)] = [
            ("wrong audience", { $0["aud"] = "https://other.example/" }, 401),
            ("expired", { $0["exp"] = now - 1 }, 401),
            ("missing iat", { $0["iat"] = nil }, 401),
            (
                "issued 20 minutes in the future",
                {
                    $0["iat"] = now + 1200; $0["exp"] = now + 3000
                }, 401
            ),
            ("lifetime two hours", { $0["exp"] = now + 7200 }, 401),
            ("another vehicle", { $0["authorization"] = ["vehicleid": "v-2"] }, 403),
            ("a trip token", { $0["authorization"] = ["tripid": "v-1"] }, 403),
        ]
        for (name, edit, status) in cases {
            let call = await put(token(edit))
            #expect(call.status == status && !call.accepted, "\(name)")
        }
        #expect(await put(token { $0["iat"] = now + 300 }).accepted, "5 minutes of skew is tolerated")
        #expect(await put(token { $0["authorization"] = ["vehicleid": "*"] }).accepted, "wildcard")
    }

    @Test func unknownPathsAre404() async {
        #expect(await put(token(), path: "/v1/providers/other-project/vehicles/v-1").status == 404)
        #expect(await put(token(), path: "/v2/things").status == 404)
    }
}

@Suite("In-memory fleet service: delivery paths and ID rules", .timeLimit(.minutes(10)))
struct InMemoryFleetServiceDeliveryTests {
    let clock = ManualWallClock()

    func call(_ method: String, _ path: String, claims: [String: Any]) async
        -> InMemoryFleetService.Call
    {
        let now = clock.now().timeIntervalSince1970
        let token = InMemoryTokenBackend.jwt(payload: [
            "aud": TokenRules.fleetServiceAudience, "iat": now, "exp": now + 3600, "authorization": claims,
        ])
        let service = InMemoryFleetService(clock: clock)
        _ = await service.respond(
            to: TransportRequest(
                method: method, url: URL(string: "https://fleet.example.com/v1/providers/demo-project\(path)")!,
                headers: ["Authorization": "Bearer \(token)"], body: Data(#"{"lastLocation":{}}"#.utf8)))
        return service.calls[0]
    }

    @Test func deliveryVehiclesTrackingAndTheirClaimKeys() async {
        #expect(await call("PATCH", "/deliveryVehicles/dv-1", claims: ["deliveryvehicleid": "dv-1"]).accepted)
        #expect(await call("PATCH", "/deliveryVehicles/dv-1", claims: ["vehicleid": "dv-1"]).status == 403)
        #expect(await call("PUT", "/vehicles/v-1", claims: ["deliveryvehicleid": "v-1"]).status == 403)
        #expect(await call("GET", "/taskTrackingInfo/s-1", claims: ["trackingid": "s-1"]).accepted)
        #expect(await call("GET", "/taskTrackingInfo/s-1", claims: ["tripid": "s-1"]).status == 403)
    }

    /// Each route of the SDK's table (the one `FleetServiceEndpoint` builds URLs from) is
    /// answered with its method and refused with 405 under another, with a token that names
    /// the ID under the route's claim key.
    @Test func everyRouteOfTheTableIsServedWithItsMethod() async {
        for route in FleetServiceRoute.all {
            let claims = [route.claimKey: "x-1"]
            let right = await call(route.method, "/\(route.collection)/x-1", claims: claims)
            // An unknown trip is 404 after the token and method pass; the others are served.
            #expect(right.status == (route == .trips ? 404 : 200), "\(right)")
            let wrong = await call(route.method == "GET" ? "PUT" : "GET", "/\(route.collection)/x-1", claims: claims)
            #expect(wrong.status == 405, "\(wrong)")
        }
    }

    @Test func anIDThatBreaksTheRulesIs400() async {
        let long = String(repeating: "x", count: 65)
        #expect(await call("PUT", "/vehicles/\(long)", claims: ["vehicleid": long]).status == 400)
        #expect(await call("PUT", "/vehicles/v%3A1", claims: ["vehicleid": "v:1"]).status == 400)
    }

    @Test func theServiceReadsBackTheConfigurationItWasMadeWith() {
        var configuration = InMemoryFleetService.Configuration(
            audience: "aud-1", providerID: "p-1", skewTolerance: 30, maximumLifetime: 1800)
        #expect(configuration.audience == "aud-1")
        #expect(configuration.providerID == "p-1")
        #expect(configuration.skewTolerance == 30)
        #expect(configuration.maximumLifetime == 1800)
        configuration.providerID = "p-2"
        let service = InMemoryFleetService(clock: clock, configuration: configuration)
        #expect(service.configuration.providerID == "p-2")
        #expect(service.configuration.maximumLifetime == 1800)
    }
}
