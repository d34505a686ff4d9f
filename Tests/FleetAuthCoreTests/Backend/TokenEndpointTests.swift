import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Token endpoint requests", .timeLimit(.minutes(10)))
struct TokenEndpointTests {
    @Test func onlyGetAndPostAreTokenMethods() throws {
        try TokenEndpoint(url: "https://api.example.com/token", method: "post").validate()
        let error = #expect(throws: FleetAuthError.self) {
            try TokenEndpoint(url: "https://api.example.com/token", method: "DELETE").validate()
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("`DELETE`; use `GET` (the default) or `POST`") == true)
    }

    @Test func queryItemsNameVehicleAndTask() throws {
        let endpoint = TokenEndpoint(url: "https://api.example.com/token?client=ios")
        let request = try endpoint.baseRequest(for: .vehicle("v+1 &x", taskID: "t-9"))
        #expect(request.method == "GET")
        #expect(
            request.url.absoluteString == "https://api.example.com/token?client=ios&vehicleId=v%2B1%20%26x&taskId=t-9")
        #expect(request.body == nil)
    }

    @Test func customQueryItemNames() throws {
        let endpoint = TokenEndpoint(
            url: "https://api.example.com/token", idQueryName: "vid", taskQueryName: "tid")
        let request = try endpoint.baseRequest(for: .vehicle("v-1", taskID: "t-1"))
        #expect(request.url.query == "vid=v-1&tid=t-1")
    }

    @Test func pathTemplateIsPercentEncoded() throws {
        let endpoint = TokenEndpoint(url: "https://api.example.com/trips/{id}/token")
        let request = try endpoint.baseRequest(for: .trip("t/7 ?#"))
        #expect(request.url.absoluteString == "https://api.example.com/trips/t%2F7%20%3F%23/token")
    }

    @Test func postSendsTheIDsAsJSON() throws {
        let endpoint = TokenEndpoint(url: "https://api.example.com/token", method: "POST")
        let request = try endpoint.baseRequest(for: .vehicle("v-1", taskID: "t-1"))
        #expect(request.method == "POST")
        #expect(request.header("content-type") == "application/json")
        let body = try JSONSerialization.jsonObject(with: try #require(request.body)) as? [String: String]
        #expect(body == ["vehicleId": "v-1", "taskId": "t-1"])
        #expect(request.url.query == "vehicleId=v-1&taskId=t-1")
    }

    @Test func appHeadersAreAddedPerRequest() async throws {
        let endpoint = TokenEndpoint(
            url: "https://api.example.com/token", headers: { scope in ["Authorization": "Bearer app-\(scope.id)"] },
            timeout: 7)
        let request = try await endpoint.request(for: .vehicle("v-1"))
        #expect(request.header("authorization") == "Bearer app-v-1")
        #expect(request.timeout == 7)
        #expect(!request.description.contains("app-v-1"))
    }

    /// Two headers of the app's own that differ only in case both stay, whatever the order of
    /// its dictionary: the transport refuses the request, rather than one going out by chance.
    @Test func twoOfTheAppsHeadersThatDifferInCaseBothStay() async throws {
        let endpoint = TokenEndpoint(
            url: "https://api.example.com/token", headers: { _ in ["Accept": "a", "accept": "b"] })
        let request = try await endpoint.request(for: .vehicle("v-1"))
        #expect(Set(request.headers.keys.filter { $0.lowercased() == "accept" }) == ["Accept", "accept"])
        #expect(request.headers["Accept"] == "a" && request.headers["accept"] == "b")
    }

    /// An app's header replaces FleetAuth's of the same name whatever the case of either: the
    /// request carries one `Accept`, the app's, not two a transport would have to choose from.
    @Test(arguments: ["Accept", "accept", "ACCEPT"])
    func anAppsHeaderReplacesFleetAuthsOfTheSameName(name: String) async throws {
        let endpoint = TokenEndpoint(
            url: "https://api.example.com/token", method: "POST",
            headers: { _ in [name: "application/jwt", "content-type": "application/json; charset=utf-8"] })
        let request = try await endpoint.request(for: .vehicle("v-1"))
        #expect(request.headers.keys.filter { $0.lowercased() == "accept" } == [name])
        #expect(request.headers[name] == "application/jwt")
        #expect(request.headers.keys.filter { $0.lowercased() == "content-type" } == ["content-type"])
        #expect(request.headers["content-type"] == "application/json; charset=utf-8")
    }

    @Test(arguments: [
        ("http://api.example.com/token", false, FleetAuthError.Reason.insecureEndpoint),
        ("http://10.0.0.5/token", false, .insecureEndpoint),
        ("ftp://api.example.com/token", false, .invalidConfiguration),
        ("/token", false, .invalidConfiguration),
        ("not a url", false, .invalidConfiguration),
    ])
    func unusableURLsAreRefused(url: String, optIn: Bool, code: FleetAuthError.Reason) {
        let endpoint = TokenEndpoint(url: url, allowsInsecureHTTP: optIn)
        do {
            _ = try endpoint.baseRequest(for: .vehicle("v-1"))
            Issue.record("expected \(code)")
        } catch {
            #expect(error.reason == code)
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:8080/token", "http://localhost/token", "http://[::1]:9000/token", "http://127.5.6.7/token",
    ])
    func plainHTTPToLoopbackIsAllowed(url: String) throws {
        _ = try TokenEndpoint(url: url).baseRequest(for: .vehicle("v-1"))
    }

    @Test func plainHTTPToOtherHostsNeedsTheOptIn() throws {
        _ = try TokenEndpoint(url: "http://staging.example.com/token", allowsInsecureHTTP: true)
            .baseRequest(for: .vehicle("v-1"))
    }

    @Test(arguments: ["localhost", "127.0.0.1", "::1", "[::1]", "api.localhost"])
    func loopbackHosts(host: String) { #expect(TokenCarryingURL.isLoopback(host)) }

    @Test(arguments: ["example.com", "127.0.0.1.example.com", "10.0.0.1", "128.0.0.1", "localhost.example.com"])
    func nonLoopbackHosts(host: String) { #expect(!TokenCarryingURL.isLoopback(host)) }

    /// The one rule the token endpoint, the fleet-service endpoint and authorized calls share.
    @Test func whichURLsMayCarryAToken() {
        #expect(TokenCarryingURL.judge(scheme: "HTTPS", host: "api.example.com") == .allowed)
        #expect(TokenCarryingURL.judge(scheme: "http", host: "127.0.0.1") == .allowed)
        #expect(TokenCarryingURL.judge(scheme: "http", host: "api.example.com") == .clearText(host: "api.example.com"))
        #expect(TokenCarryingURL.judge(scheme: "http", host: "api.example.com", allowsInsecureHTTP: true) == .allowed)
        #expect(TokenCarryingURL.judge(scheme: "ftp", host: "api.example.com") == .unsupportedScheme("ftp"))
        #expect(TokenCarryingURL.judge(scheme: "https", host: "") == .notAbsolute)
        #expect(TokenCarryingURL.judge(scheme: nil, host: "api.example.com") == .notAbsolute)
    }

    @Test(arguments: [
        ("https://api.example.com/token/driver/{vehicleId}", "https://api.example.com/token/driver/v%2042%2Fx"),
        ("https://api.example.com/token/driver/{vehicleID}", "https://api.example.com/token/driver/v%2042%2Fx"),
        ("https://api.example.com/token/driver/{deliveryVehicleId}", "https://api.example.com/token/driver/v%2042%2Fx"),
        ("https://api.example.com/token/{id}?region=eu", "https://api.example.com/token/v%2042%2Fx?region=eu"),
        ("https://api.example.com/v/{id}/t/{taskId}", "https://api.example.com/v/v%2042%2Fx/t/t-1"),
    ])
    func templatesAreFilledWithoutFurtherConfiguration(template: String, expected: String) throws {
        let endpoint = TokenEndpoint(url: template)
        try endpoint.validate(for: [.vehicle])
        let request = try endpoint.baseRequest(for: .vehicle("v 42/x", taskID: "t-1"))
        #expect(request.url.absoluteString == expected)
    }

    @Test(arguments: [
        "https://api.example.com/token/{vehicle}", "https://api.example.com/token/{tripId}",
        "https://api.example.com/token/{trackingId}", "https://api.example.com/token/{id",
        "https://api.example.com/token/id}",
    ])
    func aTemplateAVehicleProviderCannotFillIsRefusedWhenTheProviderIsMade(template: String) {
        #expect(refusalOfAVehicleProvider(with: template) != nil)
    }

    /// Why a vehicle provider with `template` could not be made (`invalidConfiguration`, no
    /// request sent), or `nil` (an issue recorded) when it was made.
    func refusalOfAVehicleProvider(with template: String) -> FleetAuthError? {
        let transport = InMemoryTransport()
        defer { #expect(transport.requestCount == 0) }
        do {
            _ = try TokenProvider<VehicleOnly>(endpoint: TokenEndpoint(url: template), transport: transport)
            Issue.record("a provider was made with \(template)")
            return nil
        } catch {
            #expect(error.reason == .invalidConfiguration)
            return error
        }
    }

    /// A placeholder in the host, the port or the user info would let an ID choose where the
    /// app's credential goes (vehicle `attacker` would send it to `attacker.localhost`): refused
    /// when the provider is made, naming the rule.
    @Test(arguments: [
        "http://{vehicleId}.localhost:8080/token", "https://{vehicleId}/token",
        "https://api.example.com@{vehicleId}/token",
        "https://api.example.com:{id}/token", "https://{id}", "{id}://api.example.com/token",
    ])
    func aPlaceholderBeforeThePathIsRefusedWhenTheProviderIsMade(template: String) {
        let message = refusalOfAVehicleProvider(with: template)?.message ?? ""
        #expect(message.contains("placeholders may stand only in the path and the query"), "\(message)")
    }
}

/// A context whose scopes are always vehicles, as the driver module's is.
struct VehicleOnly: ScopeKindsDeclaring {
    var id: String
    var scope: AuthorizationScope { .vehicle(id) }
    static var scopeKinds: [AuthorizationScope.Kind] { [.vehicle] }
}
