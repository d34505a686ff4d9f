import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import FleetAuthTool
import Foundation
import Testing

/// The checker and the SDK judge the same answer the same way: the checker reports no
/// failure exactly when the SDK accepts the token.
@Suite("The checker agrees with the SDK")
struct CheckerAgreementTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Runs the SDK's engine and the checker over one in-memory answer.
    static func judge(
        format: TokenResponseFormat, clock: ManualWallClock,
        respond: @escaping @Sendable (TransportRequest) async throws -> TransportResponse
    ) async throws -> (sdkAccepted: Bool, checkerFailures: [String]) {
        let transport = InMemoryTransport(clock: clock)
        transport.route("/token", handler: respond)
        let url = "https://backend.example.com/token"
        // One attempt each: retries are judged elsewhere, and this clock does not move.
        let retry = RetryPolicy(maximumAttempts: 1, failureCooldown: 0)
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: url, format: format, timeout: 5), transport: transport, clock: clock,
                retry: retry))
        let accepted = (try? await engine.token(for: HostileAnswers.scope)) != nil
        var options = EndpointChecker.Options(url: url, scope: HostileAnswers.scope, format: format)
        options.retry = retry
        let checker = EndpointChecker(options: options, transport: transport, clock: clock)
        let report = await checker.run()
        return (accepted, report.findings.filter { $0.verdict == .failure }.map(\.check))
    }

    static let agreeable = HostileAnswers.all(now: now).filter {
        if case .slow = $0.delivery { return false }  // the checker waits on the network, not the clock
        return $0.rejectedBefore == nil  // a re-mint is judged by history, not by the answer
    }

    @Test(arguments: agreeable)
    func everyAnswerTheSDKRefusesFailsACheck(answer: HostileAnswer) async throws {
        let clock = ManualWallClock(now: Self.now)
        let verdict = try await Self.judge(format: answer.format, clock: clock) { _ in
            try await HostileAnswers.respond(with: answer, clock: clock)
        }
        #expect(!verdict.sdkAccepted)
        #expect(!verdict.checkerFailures.isEmpty, "the checker passed an answer the SDK refuses (\(answer.expected))")
    }

    @Test(arguments: TokenResponseFormat.presets)
    func everySoundAnswerPassesBoth(format: TokenResponseFormat) async throws {
        let clock = ManualWallClock(now: Self.now)
        let backend = InMemoryTokenBackend(clock: clock, configuration: .init(format: format))
        let verdict = try await Self.judge(format: format, clock: clock) { request in
            try await backend.respond(to: request)
        }
        #expect(verdict.sdkAccepted)
        #expect(verdict.checkerFailures.isEmpty, "\(verdict.checkerFailures)")
    }
}
