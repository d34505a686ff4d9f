import FleetAuthCore
import FleetAuthTestSupport
import FleetAuthURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The transport's response-size cap at its exact edge, on each of its paths: the session the
/// transport makes and a session of the app's own, for token requests (their bodies stream
/// through the guard, counted as they arrive) and fleet calls (their bodies come whole, and are
/// checked once they have arrived).
@Suite("URLSession transport: the response-size cap to the byte", .timeLimit(.minutes(10)))
struct ResponseSizeCapTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    static let cap = 1024

    func send(
        _ path: String, through transport: URLSessionTransport, askingForToken: Bool = false
    ) async throws -> TransportResponse {
        try await transport.send(.to(URL(string: server.url(path))!, askingForToken: askingForToken))
    }

    func appSessionTransport() -> URLSessionTransport {
        URLSessionTransport(
            session: URLSession(configuration: .ephemeral), configuration: .init(maximumResponseBytes: Self.cap))
    }

    /// A transport over the app's own session still enforces the cap: a body one byte over
    /// it is refused with `responseTooLarge`.
    @Test(arguments: [false, true])
    func anAppSessionRefusesABodyOneByteOverTheCap(askingForToken: Bool) async throws {
        do {
            let response = try await send(
                "/conformance/bytes?count=\(Self.cap + 1)", through: appSessionTransport(),
                askingForToken: askingForToken)
            Issue.record("a body of \(response.body.count) bytes passed a \(Self.cap)-byte cap")
        } catch let error as FleetAuthError {
            #expect(error.reason == .responseTooLarge)
        }
    }

    /// Over the app's own session, a body of exactly the cap is accepted whole: the cap is
    /// the largest body allowed, not the first one refused.
    @Test(arguments: [false, true])
    func anAppSessionAcceptsABodyOfExactlyTheCap(askingForToken: Bool) async throws {
        let response = try await send(
            "/conformance/bytes?count=\(Self.cap)", through: appSessionTransport(), askingForToken: askingForToken)
        #expect(response.status == 200 && response.body.count == Self.cap)
    }

    /// Through the transport's own session, a body of exactly the cap is accepted whole,
    /// whether its length is announced (`Content-Length`) or it streams until the close.
    @Test(arguments: ["/conformance/bytes", "/conformance/stream"], [false, true])
    func anOwnSessionAcceptsABodyOfExactlyTheCap(path: String, askingForToken: Bool) async throws {
        let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: Self.cap))
        let response = try await send("\(path)?count=\(Self.cap)", through: transport, askingForToken: askingForToken)
        #expect(response.status == 200 && response.body.count == Self.cap)
    }

    /// Through the transport's own session, a body one byte over the cap is refused, whether
    /// announced or streamed.
    @Test(arguments: ["/conformance/bytes", "/conformance/stream"], [false, true])
    func anOwnSessionRefusesABodyOneByteOverTheCap(path: String, askingForToken: Bool) async throws {
        let transport = URLSessionTransport(configuration: .init(maximumResponseBytes: Self.cap))
        do {
            let response = try await send(
                "\(path)?count=\(Self.cap + 1)", through: transport, askingForToken: askingForToken)
            Issue.record("a body of \(response.body.count) bytes passed a \(Self.cap)-byte cap")
        } catch let error as FleetAuthError {
            #expect(error.reason == .responseTooLarge)
        }
    }
}
