import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import FleetAuthURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Hostile backends over real HTTP", .timeLimit(.minutes(10)))
struct HostileBackendOverHTTPTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    /// Where the fixture serves `answer`.
    func path(for answer: HostileAnswer) async throws -> String {
        switch answer.delivery {
        case .http(let status, let headers, let body):
            return try await server.scriptedURL(status: status, headers: headers, body: body)
        case .oversized(let count): return server.url("/conformance/bytes?count=\(count)")
        case .redirectToOtherHost: return server.url("/conformance/redirect")
        case .slow: return server.url("/conformance/hang")
        case .closedMidBody: return server.url("/close-mid-body")
        case .refused: return "http://127.0.0.1:1/token"
        }
    }

    /// Each answer is made anew when its test runs, with the time then: the fixture's `Date`
    /// header is real time, so a 10-second lifetime made when the run started could have
    /// expired by the time a loaded machine gets to it.
    @Test(arguments: HostileAnswers.all(now: Date()).map(\.name))
    func answerIsATypedErrorAndNothingIsCached(name: String) async throws {
        let now = Date()
        let answer = try #require(HostileAnswers.all(now: now).first { $0.name == name })
        let clock = ManualWallClock(now: now)
        let engine = try HostileAnswers.engine(
            url: try await path(for: answer), answer: answer,
            transport: URLSessionTransport(configuration: .init(maximumResponseBytes: 128 * 1024)), clock: clock)
        let outcome = await HostileAnswers.fetch(answer, from: engine, clock: clock)
        do {
            let token = try outcome.get()
            Issue.record("\(answer.name): expected \(answer.expected), got \(token)")
        } catch let error as FleetAuthError {
            // A short-lived token's exact cause depends on real time here: the fixture's Date
            // header is the real clock, so on a loaded machine it may have expired by the time
            // it is read (the in-memory suite checks the exact cause on a manual clock).
            if answer.expected.code == .tokenExpired {
                #expect(error.code == .tokenExpired, "\(answer.name): \(error)")
            } else {
                #expect(error.reason == answer.expected, "\(answer.name): \(error)")
            }
        }
        #expect(engine.statistics.cachedScopes == 0)
    }
}
