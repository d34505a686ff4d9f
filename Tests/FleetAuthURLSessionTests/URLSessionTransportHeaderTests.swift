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

    /// What `URLRequest.setValue` dropped silently (a value with a line break), sent (another
    /// control character, a folded line) or never checked (a name) or left to chance (two names
    /// that differ in case) is refused before anything is sent, naming the header and never its
    /// value.
    @Test(arguments: [
        (["X-Note": "ok\r\nX-Injected: secret-value"], "'X-Note'", "a carriage return"),
        (["X-Note": "secret-value\r\n folded"], "'X-Note'", "a carriage return"),
        (["X-Note": "secret-value\u{0}"], "'X-Note'", "a NUL"),
        (["X-Note": "secret-value\u{7F}"], "'X-Note'", "U+007F"),
        (["X Note": "secret-value"], "'X Note'", "whose name holds a space"),
        (["X-Note\r\nX-Injected": "secret-value"], "'X-Note\\r\\nX-Injected'", "whose name holds a carriage return"),
        (["": "secret-value"], "empty name", "empty name"),
        (["x-note": "secret-value", "X-Note": "secret-value"], "'X-Note'", "twice"),
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

    /// Every ASCII byte, and a few beyond, in a name and in a value: a name takes the token
    /// characters only, a value anything but a control character other than the tab.
    @Test func whichCharactersANameAndAValueTake() throws {
        let url = URL(string: "https://fleet.example.com/v1")!
        func sends(_ headers: [String: String]) -> Bool {
            (try? URLSessionTransport.headerFields(of: TransportRequest(url: url, headers: headers))) != nil
        }
        let token = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".unicodeScalars)
        for value in UInt32(0)...0x7F {
            let scalar = Unicode.Scalar(value)!
            let text = String(Character(scalar))
            #expect(sends(["X" + text: "v"]) == token.contains(scalar), "name with \(value)")
            #expect(
                sends(["X-Note": "a" + text + "b"]) == (value == 9 || (value >= 0x20 && value != 0x7F)),
                "value with \(value)")
        }
        #expect(!sends(["X-Caf\u{E9}": "v"]))
        #expect(sends(["X-Note": "caf\u{E9} \u{1F697}"]))
        #expect(sends(["Authorization": "Bearer " + String(repeating: "eyJhbGciOiJSUzI1NiJ9.", count: 33)]))
    }

    /// A token pasted where a name goes is not shown in the refusal.
    @Test func aNameThatMayHoldACredentialIsNotShown() throws {
        let token = "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ2LTEifQ"
        let request = TransportRequest(
            url: URL(string: "https://fleet.example.com/v1")!, headers: [token: "Authorization"])
        let error = #expect(throws: FleetAuthError.self) { try URLSessionTransport.headerFields(of: request) }
        let message = error?.message ?? ""
        #expect(message.contains("whose name holds a space") && message.contains("not shown"), "\(message)")
        #expect(!message.contains("eyJ"), "\(message)")
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
