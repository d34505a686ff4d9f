import FleetAuthCore
import FleetAuthDriver
import FleetAuthFleetService
import FleetAuthTestSupport
import FleetAuthURLSession
import Foundation
import Testing

/// The header fields a request goes out with, seen by the loopback fixture's echo: set at once
/// on the `URLRequest`, and checked by the transport itself.
@Suite("URLSession transport: the headers a request carries", .timeLimit(.minutes(1)))
struct URLSessionTransportHeaderTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    /// The headers the fixture's echo saw, names lower-cased.
    private func echoedHeaders(_ headers: [String: String]) async throws -> [String: String] {
        let request = TransportRequest(url: URL(string: server.url("/conformance/echo"))!, headers: headers)
        let response = try await URLSessionTransport().send(request)
        let echoed = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return try #require(echoed?["headers"] as? [String: String])
    }

    @Test func aRequestsHeadersGoOutWholeWithIdentityEncoding() async throws {
        let bearer = "Bearer " + String(repeating: "eyJhbGciOiJSUzI1NiJ9.", count: 33)  // a token's length
        let seen = try await echoedHeaders([
            "Authorization": bearer, "Content-Type": "application/json", "X-Trace": "a\tb c",
        ])
        #expect(seen["authorization"] == bearer)
        #expect(seen["content-type"] == "application/json")
        #expect(seen["x-trace"] == "a\tb c")
        #expect(seen["accept-encoding"] == "identity")
    }

    @Test(arguments: ["Accept-Encoding", "accept-encoding"])
    func aRequestThatNamesAnEncodingKeepsIt(name: String) async throws {
        #expect(try await echoedHeaders([name: "gzip"])["accept-encoding"] == "gzip")
    }

    /// What `URLRequest.setValue` dropped silently (a value with a line break) or left to
    /// chance (two names that differ in case) is refused before anything is sent, naming the
    /// header and never its value.
    @Test(arguments: [
        (["X-Note": "ok\r\nX-Injected: secret-value"], "X-Note", "line break"),
        (["X-Note": "secret-value\u{0}"], "X-Note", "control character"),
        (["X Note": "secret-value"], "X Note", "not an HTTP field name"),
        (["X-Note\r\nX-Injected": "secret-value"], "X-Note\\r\\nX-Injected", "not an HTTP field name"),
        (["x-note": "secret-value", "X-Note": "secret-value"], "X-Note", "twice"),
    ])
    func aHeaderThatCannotBeSentIsRefusedAndNothingGoesOut(
        headers: [String: String], named name: String, problem: String
    ) async throws {
        let key = LoopbackServer.uniqueKey()
        let url = URL(string: server.url("/token/driver?vehicleId=v-1&key=\(key)"))!
        let error = await #expect(throws: FleetAuthError.self) {
            try await URLSessionTransport().send(TransportRequest(url: url, headers: headers))
        }
        #expect(error?.reason == .invalidConfiguration)
        let message = error?.message ?? ""
        #expect(message.contains(name) || message.contains(name.lowercased()), "\(message)")
        #expect(message.contains(problem), "\(message)")
        #expect(message.contains("nothing was sent"), "\(message)")
        #expect(!message.contains("secret-value"), "\(message)")
        #expect(try await server.requestCount(key: key) == 0)
    }

    /// Through an authorized call the refusal is the caller's fault, not the network's: no
    /// retry would send that header.
    @Test func anAuthorizedCallWithAHeaderThatCannotBeSentIsTheCallersFault() async throws {
        let key = LoopbackServer.uniqueKey()
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: server.url("/token/expires-in-seconds"), format: .tokenWithExpiresInSeconds),
            transport: URLSessionTransport())
        let caller = AuthorizedCaller(
            context: DriverAuthorizationContext(vehicleID: "v-1"), authorization: provider,
            transport: URLSessionTransport())
        let url = URL(string: server.url("/token/driver?vehicleId=v-1&key=\(key)"))!
        let error = await #expect(throws: FleetServiceError.self) {
            try await caller.send(TransportRequest(url: url, headers: ["X-Note": "a\nsecret-value"]))
        }
        #expect(error?.fault == .caller)
        let message = error?.message ?? ""
        #expect(message.contains("nothing was sent") && message.contains("'X-Note'"), "\(message)")
        #expect(!message.contains("retried") && !message.contains("secret-value"), "\(message)")
        #expect(try await server.requestCount(key: key) == 0)
    }
}
