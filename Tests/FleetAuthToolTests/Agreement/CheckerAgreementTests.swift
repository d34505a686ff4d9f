import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import FleetAuthTool
import Foundation
import Testing

/// The checker and the SDK judge the same answer the same way: the checker reports no
/// failure exactly when the SDK accepts the token.
@Suite("The checker agrees with the SDK", .timeLimit(.minutes(10)))
struct CheckerAgreementTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Runs the SDK's engine and the checker over one in-memory answer.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func judge(
        format: TokenResponseFormat, clock: ManualWallClock, scope: AuthorizationScope = HostileAnswers.scope,
        fleet: FleetFlavor = .onDemand,
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
                retry: retry, rules: TokenRules(fleet: fleet)))
        let accepted: Bool
        do {
            _ = try await clock.atOnce { try await engine.token(for: scope) }
            accepted = true
        } catch let stalled as ManualWallClock.Stalled {
            Issue.record("one attempt, answered in memory, must not wait for the clock: \(stalled)")
            accepted = false
        } catch {
            accepted = false
        }
        var options = EndpointChecker.Options(url: url, scope: scope, format: format, fleet: fleet)
        options.retry = retry
        let checker = EndpointChecker(options: options, transport: transport, clock: clock)
        // One attempt here too: a checker that waits for the clock fails the test at once.
        let report = try await clock.atOnce { await checker.run() }
        return (accepted, report.findings.filter { $0.verdict == .failure }.map(\.check))
    }

    static let agreeable = HostileAnswers.all(now: now).filter {
        if case .slow = $0.delivery { return false }  // the checker waits on the network, not the clock
        return $0.rejectedBefore == nil  // a re-mint is judged by history, not by the answer
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: agreeable)
    func everyAnswerTheSDKRefusesFailsACheck(answer: HostileAnswer) async throws {
        let clock = ManualWallClock(now: Self.now)
        let verdict = try await Self.judge(format: answer.format, clock: clock) { _ in
            try await HostileAnswers.respond(with: answer, clock: clock)
        }
        #expect(!verdict.sdkAccepted)
        #expect(!verdict.checkerFailures.isEmpty, "the checker passed an answer the SDK refuses (\(answer.expected))")
    }

    /// The check that must fail for each of the SDK's refusals: the finding names the part
    /// the SDK refused, so its fix points there.
    static let checkFor: [FleetAuthError.Reason: Set<String>] = [
        .malformedResponse: ["shape"], .malformedToken: ["jwt", "lifetime", "header.alg"],
        .unexpectedStatus: ["status"],
        .expiryMismatch: ["expiry-agreement"], .scopeMismatch: ["authorization"], .transportFailure: ["request"],
        .tokenExpired: ["lifetime"], .redirectRefused: ["redirect"], .lifetimeTooLong: ["lifetime"],
        .lifetimeTooShort: ["lifetime"], .audienceMismatch: ["aud"], .wildcardRefused: ["authorization"],
        .responseTooLarge: ["body-size"], .missingExpiry: ["lifetime"],
    ]

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: agreeable)
    func theFailingCheckIsThePartTheSDKRefused(answer: HostileAnswer) async throws {
        let clock = ManualWallClock(now: Self.now)
        let verdict = try await Self.judge(format: answer.format, clock: clock) { _ in
            try await HostileAnswers.respond(with: answer, clock: clock)
        }
        let expected = try #require(Self.checkFor[answer.expected], "no check mapped for \(answer.expected)")
        #expect(
            !expected.isDisjoint(with: verdict.checkerFailures),
            "SDK: \(answer.expected); checker failed \(verdict.checkerFailures), expected one of \(expected.sorted())")
        // Only a request that got no answer is sent to check the server's reachability.
        if answer.expected != .transportFailure { #expect(!verdict.checkerFailures.contains("request")) }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
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

    /// Every flavor against every vehicle claim key, with and without task claims.
    static let claimCases: [(FleetFlavor, String, [String]?, String?)] = {
        var cases: [(FleetFlavor, String, [String]?, String?)] = []
        for fleet in [FleetFlavor.onDemand, .delivery] {
            for key in ["vehicleid", "deliveryvehicleid"] {
                for (tasks, taskID) in [
                    (nil, nil), (nil, "task-9"), (["task-9"], "task-9"), (["task-1"], "task-9"),
                    ([], "task-9"), (["*"], "task-9"),
                ] as [([String]?, String?)] {
                    cases.append((fleet, key, tasks, taskID))
                }
            }
        }
        return cases
    }()

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: 0..<claimCases.count)
    func flavorsAndTasksAreJudgedAlike(index: Int) async throws {
        let (fleet, key, tasks, taskID) = Self.claimCases[index]
        let clock = ManualWallClock(now: Self.now)
        var authorization: [String: Any] = [key: "dv-1"]
        if let tasks { authorization["taskids"] = tasks }
        let iat = Int(Self.now.timeIntervalSince1970)
        let token = InMemoryTokenBackend.jwt(payload: [
            "aud": TokenRules.fleetServiceAudience, "iat": iat, "exp": iat + 3600, "authorization": authorization,
        ])
        let body = try JSONSerialization.data(withJSONObject: ["token": token])
        let verdict = try await Self.judge(
            format: .tokenOnly, clock: clock, scope: .vehicle("dv-1", taskID: taskID), fleet: fleet
        ) { _ in
            TransportResponse(status: 200, headers: ["Content-Type": "application/json"], body: body)
        }
        #expect(
            verdict.sdkAccepted == verdict.checkerFailures.isEmpty,
            "\(fleet) \(key) tasks \(tasks ?? []) task \(taskID ?? "none"): SDK \(verdict.sdkAccepted), checker \(verdict.checkerFailures)"
        )
        // The expected verdict, independently: the flavor's key, and a task claim naming the task.
        let expected =
            key == fleet.vehicleClaimKey
            && (taskID == nil || tasks == nil || tasks!.contains(taskID!) || tasks!.contains("*"))
        #expect(verdict.sdkAccepted == expected)
    }
}
