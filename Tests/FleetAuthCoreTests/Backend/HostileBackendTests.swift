import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Hostile backends, in memory", .timeLimit(.minutes(10)))
struct HostileBackendTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theTableHasAtLeastFortyAnswers() {
        #expect(HostileAnswers.all(now: Self.now).count >= 40)
    }

    @Test(arguments: HostileAnswers.all(now: now))
    func answerIsATypedErrorAndNothingIsCached(answer: HostileAnswer) async throws {
        let clock = ManualWallClock(now: Self.now)
        let transport = InMemoryTransport(clock: clock)
        transport.route("/token") { _ in try await HostileAnswers.respond(with: answer, clock: clock) }
        let engine = try HostileAnswers.engine(
            url: "https://backend.example.com/token", answer: answer, transport: transport, clock: clock)
        let outcome = await HostileAnswers.fetch(answer, from: engine, clock: clock)
        do {
            let token = try outcome.get()
            Issue.record("\(answer.name): expected \(answer.expected), got \(token)")
        } catch let error as FleetAuthError {
            #expect(error.reason == answer.expected, "\(answer.name): \(error)")
            #expect(error.scope == HostileAnswers.scope)
            if case .http(_, _, let body) = answer.delivery, body.count > 40 {
                // Nothing of the answer's body (which may hold a token) reaches the error.
                let text = String(decoding: body, as: UTF8.self)
                for piece in text.split(whereSeparator: { "\"{}:,. ".contains($0) }) where piece.count > 40 {
                    #expect(
                        !(String(reflecting: error) + String(describing: error.underlyingError)).contains(piece),
                        "\(answer.name) leaks the body")
                }
            }
        }
        #expect(engine.statistics.cachedScopes == 0)
        #expect(engine.cachedToken(for: HostileAnswers.scope) == nil)
    }
}

@Suite("Hostile backends, documented", .timeLimit(.minutes(10)))
struct HostileBackendDocumentationTests {
    /// The table in the docs lists every hostile answer with its cause and its code.
    @Test func theDocsListEveryAnswer() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/FleetAuthCore/Documentation.docc/HostileBackends.md")
        let text = (try? String(contentsOf: docs, encoding: .utf8)) ?? ""
        let rows = HostileAnswers.all(now: HostileBackendTests.now).map {
            "| \($0.name) | `\($0.expected)` | `\($0.expected.code)` |"
        }
        let missing = rows.filter { !text.contains($0) }
        #expect(missing.isEmpty, "add these rows to HostileBackends.md:\n\(missing.joined(separator: "\n"))")
    }
}
