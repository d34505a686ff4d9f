import FleetAuthCore
import FleetAuthTestSupport
import FleetAuthTool
import FleetAuthURLSession
import Foundation
import Testing

/// Runs `fleetauth` in process against the loopback fixture and keeps what it printed.
struct CommandRun {
    let status: Int32
    let output: String
    let errors: String

    static func run(_ arguments: [String]) async -> CommandRun {
        let output = Lines()
        let errors = Lines()
        let status = await FleetAuthCommand.run(
            arguments, transport: URLSessionTransport(), output: output.append, errorOutput: errors.append)
        return CommandRun(status: status, output: output.text, errors: errors.text)
    }

    /// `fleetauth check-endpoint` with `arguments`, for a run against the loopback fixture.
    /// Unless they set `--timeout`, it allows 120 s for the exchange: under the thread
    /// sanitizer a parallel run has kept the fixture's answer past the default 15 s, which
    /// failed a check about something else. An endpoint that answers takes no longer.
    static func checkEndpoint(_ arguments: [String]) async -> CommandRun {
        let timeout = arguments.contains("--timeout") ? [] : ["--timeout", "120"]
        return await run(["check-endpoint"] + timeout + arguments)
    }

    /// The finding line for `check`, e.g. `  failure  lifetime          7200 s (exp − iat)`.
    func line(_ check: String) -> String? {
        output.split(separator: "\n").first { $0.dropFirst(11).hasPrefix(check + " ") }.map(String.init)
    }
}

final class Lines: @unchecked Sendable {
    // Safe because `lines` is only touched while `lock` is held.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var text: String { lock.withLock { lines.joined(separator: "\n") } }
}

@Suite("fleetauth check-endpoint against the loopback backend", .timeLimit(.minutes(10)))
struct EndpointCheckerTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    func check(_ path: String, _ extra: [String] = []) async -> CommandRun {
        await CommandRun.checkEndpoint(["--url", server.url(path), "--vehicle-id", "v-42"] + extra)
    }

    @Test(arguments: [
        "/token/token-only", "/token/swift-sample", "/token/objc-sample", "/token/jwt-expiration-timestamp",
        "/token/expiration-timestamp-ms", "/token/expires-in-seconds", "/token/plain",
    ])
    func soundEndpointsPass(path: String) async {
        let run = await check(path)
        #expect(run.status == 0, "\(run.output)")
        #expect(!run.output.contains("\n  failure"))
        #expect(run.output.contains("token fingerprint tok_"))
        #expect(!run.output.contains("eyJ"))  // no token, nor any part of one
    }

    @Test(arguments: ["/token/driver/{vehicleId}", "/token/driver/{id}", "/token/driver/{vehicleID}"])
    func aSampleBackendsTemplateURLIsFilledAndShown(template: String) async {
        let run = await check(template, ["--format", "jwt-expiration-timestamp"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.hasPrefix("fleetauth check-endpoint \(server.url("/token/driver/v-42")) "), "\(run.output)")
    }

    /// A trip's URL checked with a vehicle ID: the fix names the flag that asks for a trip.
    @Test func aURLOfAnotherKindNamesTheFlagForThatKind() async {
        let run = await check("/token/consumer/{tripId}", ["--format", "jwt-expiration-timestamp"])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("fix: pass --trip-id to check a URL of trip tokens"), "\(run.output)")
    }

    @Test func theDeliverySampleBackendsPass() async {
        let driver = await CommandRun.checkEndpoint([
            "--url", server.url("/token/delivery_driver/{vehicleId}"),
            "--vehicle-id", "dv-1",
            "--fleet", "delivery",
        ])
        #expect(driver.status == 0, "\(driver.output)")
        #expect(driver.line("authorization")?.contains("covers vehicle dv-1 under `deliveryvehicleid`") == true)
        let consumer = await CommandRun.checkEndpoint([
            "--url", server.url("/token/delivery_consumer/{trackingId}"),
            "--tracking-id", "s-1",
        ])
        #expect(consumer.status == 0, "\(consumer.output)")
        #expect(consumer.line("authorization")?.contains("covers tracking ID s-1") == true, "\(consumer.output)")
    }

    @Test(arguments: [
        (
            "/token/delivery_driver/{vehicleId}", ["--fleet", "on-demand"], "`deliveryvehicleid` (delivery fleets)",
            "--fleet delivery"
        ),
        ("/token/driver/{vehicleId}", ["--fleet", "delivery"], "`vehicleid` (on-demand fleets)", "--fleet on-demand"),
    ])
    func aTokenForTheOtherFlavorFailsNamingBothKeys(path: String, flags: [String], found: String, hint: String) async {
        let run = await CommandRun.checkEndpoint(
            ["--url", server.url(path), "--vehicle-id", "dv-1"] + flags)
        #expect(run.status == 1, "\(run.output)")
        let line = run.line("authorization") ?? ""
        #expect(line.contains("failure") && line.contains("names the vehicle under \(found)"), "\(run.output)")
        #expect(run.output.contains("pass \(hint)"), "\(run.output)")
    }

    @Test func aTaskClaimNamingAnotherTaskFailsAsTheSDKRefusesIt() async {
        let run = await CommandRun.checkEndpoint([
            "--url",
            server.url("/token/delivery_driver/{vehicleId}?taskid=task-1"),
            "--vehicle-id", "dv-1", "--task-id", "task-9", "--fleet", "delivery",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.line("authorization")?.contains("does not name task task-9") == true, "\(run.output)")
    }

    @Test(arguments: [
        (["--vehicle-id", "a/b"], "--vehicle-id: The vehicle ID contains `/`"),
        (["--vehicle-id", String(repeating: "x", count: 65)], "--vehicle-id: The vehicle ID has 65 characters"),
        (["--vehicle-id", ""], "--vehicle-id: The vehicle ID is empty"),
        (["--vehicle-id", "v-1", "--task-id", "t:9"], "--task-id: The task ID contains `:`"),
        (["--trip-id", "t#1"], "--trip-id: The trip ID contains `#`"),
        (["--vehicle-id", "v-1", "--fleet", "rides"], "--fleet takes on-demand or delivery, not rides"),
    ])
    func aBadIDOrFlagIsAUsageErrorNamingTheRule(flags: [String], message: String) async {
        let run = await CommandRun.run(["check-endpoint", "--url", server.url("/token/token-only")] + flags)
        #expect(run.status == 2, "\(run.output)")
        #expect(run.errors.contains("fleetauth: \(message)"), "\(run.errors)")
    }

    @Test func theTimeoutBoundsAnEndpointThatNeverAnswers() async {
        let run = await CommandRun.run([
            "check-endpoint", "--url", server.url("/conformance/hang"), "--vehicle-id", "v-1", "--timeout", "0.3",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.line("request")?.contains("no answer within 0.3 s") == true, "\(run.output)")
    }

    @Test func anOversizedBodyPointsAtTheBodyNotTheServer() async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/conformance/bytes?count=20000000"),
            "--vehicle-id", "v-1",
        ])
        #expect(run.status == 1)
        #expect(run.line("body-size")?.contains("failure") == true, "\(run.output)")
        #expect(run.output.contains("fix: return only the token and its expiry"), "\(run.output)")
        #expect(!run.output.contains("up and reachable"), "\(run.output)")
    }

    @Test func aRefusedConnectionIsNamed() async {
        // A long --timeout: a refusal is answered at once, but under load (the thread
        // sanitizer, the hostile-network tests draining bodies in this process) its callback
        // has come later than the default 15 s allow for every attempt.
        let run = await CommandRun.run([
            "check-endpoint", "--url", "http://127.0.0.1:1/token", "--vehicle-id", "v-1", "--timeout", "120",
        ])
        #expect(run.status == 1)
        #expect(run.line("request")?.contains("no answer (connection refused") == true, "\(run.output)")
    }

    /// A `--header` the transport will not send is named as the header to mend, not as a
    /// server that did not answer, its value is not printed, and no request reached the server.
    @Test func aHeaderThatCannotBeSentIsNamedAsTheHeaderToMend() async throws {
        let key = LoopbackServer.uniqueKey()
        let run = await check(
            "/token/driver/{vehicleId}?key=\(key)", ["--header", "X-Note: secret-value\rX-Injected: 1"])
        #expect(try await server.requestCount(key: key) == 0)
        #expect(run.status == 1)
        let line = run.line("request") ?? ""
        #expect(line.contains("'X-Note'") && line.contains("nothing was sent"), "\(run.output)")
        #expect(run.output.contains("mend the header given with --header"), "\(run.output)")
        #expect(!run.output.contains("server is up") && !run.output.contains("secret-value"), "\(run.output)")
    }

    @Test func aStatusTheSDKRetriesIsReportedAsWhatHappened() async {
        // 503 once, then a token: the SDK retries and succeeds, so the checker passes with a warning.
        // A long --timeout: under load the first answer may take seconds, and the retry must fit.
        let run = await CommandRun.run([
            "check-endpoint", "--url", server.url("/token/token-only?fail=1&key=retry-\(UUID().uuidString)"),
            "--vehicle-id", "v-1", "--timeout", "120",
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(
            run.line("retries")?.contains("HTTP 503, then HTTP 200 on attempt 2: the SDK retries this") == true,
            "\(run.output)")
    }

    @Test func aRetryTheTimeoutLeavesNoRoomForIsNamedWithTheFlagToRaise() async {
        // 503 asking for a retry in an hour: within a 60-s --timeout the SDK cannot retry it.
        let run = await CommandRun.run([
            "check-endpoint", "--url",
            server.url("/token/token-only?fail=1&retryAfter=3600&key=late-\(UUID().uuidString)"),
            "--vehicle-id", "v-1", "--timeout", "60",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(
            run.line("status")?.contains(
                "HTTP 503, and no time left within 60 s for another attempt (Retry-After asked for 3600 s)") == true,
            "\(run.output)")
        #expect(run.output.contains("or raise --timeout"), "\(run.output)")
    }

    @Test func theResultLineCountsInGoodGrammar() async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/swift-sample?wildcard=1"), "--vehicle-id",
            "v-1",
        ])
        #expect(run.output.contains("(1 failure, 0 warnings,"), "\(run.output)")
        #expect(run.output.contains("format: --format swift-sample (Swift: .swiftSample())"), "\(run.output)")
    }

    @Test func anUnknownPlaceholderIsAConfigurationFailureBeforeAnyRequest() async {
        let run = await check("/token/driver/{vehicle}")
        #expect(run.status == 1)
        #expect(run.line("transport")?.contains("{vehicle}") == true, "\(run.output)")
        #expect(run.line("status") == nil)  // nothing was requested
    }

    @Test func keyNamesOfItsOwnAreInferredAndNamedAsFlagsAndSwift() async {
        let run = await check("/token/custom-keys")
        #expect(run.status == 0, "\(run.output)")
        let shape = run.line("shape") ?? ""
        #expect(shape.hasPrefix("  warning") && shape.contains("accessToken"), "\(run.output)")
        #expect(run.output.contains("--token-key accessToken --expiry-key expiresAtMillis --expiry-unit milliseconds"))
        #expect(
            run.output.contains(
                ".json(tokenKey: \"accessToken\", expiryKey: \"expiresAtMillis\", expiryUnit: .absoluteMilliseconds)"))
        #expect(run.line("lifetime")?.hasPrefix("  ok") == true)  // every other check ran on it
        let configured = await check(
            "/token/custom-keys",
            [
                "--token-key", "accessToken", "--expiry-key", "expiresAtMillis", "--expiry-unit", "milliseconds",
                "--json",
            ])
        #expect(configured.status == 0, "\(configured.output)")
        #expect(configured.output.contains(#""format":"--token-key accessToken"#), "\(configured.output)")
    }

    @Test func aSecondStatedExpiryThatContradictsExpFails() async {
        let run = await check("/token/expires-in-seconds?extraExpiration=1")
        #expect(run.status == 1)
        #expect(run.output.contains("failure  expiry-agreement  the body's expiration"), "\(run.output)")
    }

    @Test func detectsThePresetAndItsUnit() async {
        let run = await check("/token/jwt-expiration-timestamp")
        #expect(run.line("shape")?.contains("expirationTimestamp") == true)
        #expect(run.line("shape")?.contains("milliseconds") == true)
        #expect(run.line("expiry-agreement")?.hasPrefix("  ok") == true)
    }

    /// Every check, with a broken endpoint that trips it.
    @Test(arguments: [
        ("status", "/token/token-only?status=500", [String]()),
        ("status", "/token/token-only?status=401", []),
        ("redirect", "/conformance/redirect", []),
        ("shape", "/token/token-only", ["--format", "expires-in-seconds"]),
        ("shape", "/conformance/echo", []),
        ("jwt", "/conformance/bytes?count=10", []),
        ("body-size", "/token/token-only?pad=70000", []),
        ("expiry-agreement", "/token/swift-sample?expiryScale=1000", []),
        ("expiry-agreement", "/token/expiration-timestamp-ms?expiryScale=0.001", []),
        ("header.alg", "/token/token-only?alg=none", []),
        ("aud", "/token/token-only?noAud=1", []),
        ("aud", "/token/token-only", ["--audience", "https://fleet.example.com/"]),
        ("lifetime", "/token/token-only?lifetime=7200", []),
        ("lifetime", "/token/token-only?lifetime=20", []),
        ("lifetime", "/token/token-only?iatOffset=-4000", []),
        ("lifetime", "/token/token-only?noExp=1", []),
        ("authorization", "/token/token-only?wrongId=1", []),
        ("authorization", "/token/token-only?wildcard=1", []),
        ("clock", "/token/token-only?iatOffset=1200", []),
        ("clock", "/token/token-only?iatOffset=-900", []),
    ])
    func brokenEndpointsFailWithANamedFault(check name: String, path: String, extra: [String]) async {
        let run = await check(path, extra)
        #expect(run.status == 1, "\(run.output)")
        let line = run.line(name)
        #expect(line?.hasPrefix("  failure") == true, "\(name) in:\n\(run.output)")
        #expect(run.output.contains("fix: "))
        #expect(!run.output.contains("eyJ"))
    }

    @Test(arguments: [
        ("header.kid", "/token/token-only?noKid=1"),
        ("header.alg", "/token/token-only?alg=HS256"),
        ("iss/sub", "/token/token-only?noIss=1"),
        ("content-type", "/token/token-only?contentType=text/html"),
        ("body-size", "/token/token-only?pad=20000"),
        ("redirect", "/conformance/redirect-same-host"),
        // The SDK takes a 200 s token (its margin is a quarter of a short lifetime); the
        // contract's 5 minutes make it an advisory.
        ("lifetime", "/token/token-only?lifetime=200"),
    ])
    func riskyEndpointsWarn(check name: String, path: String) async {
        let run = await check(path)
        #expect(run.line(name)?.hasPrefix("  warning") == true, "\(name) in:\n\(run.output)")
    }

    @Test func missingDateHeaderIsAWarning() async {
        // On the manual clock: under a loaded CI machine the system clock's 15 s bound ran out
        // before the in-memory answer was read, and the report had no answer to judge.
        let report = await CheckerFixTests.report(body: Data(#"{"token":"x"}"#.utf8))
        #expect(report.findings.first { $0.check == "date-header" }?.verdict == .warning)
    }

    @Test func theAudienceCheckCanBeTurnedOffLikeTheSDKs() async {
        let run = await check("/token/token-only?noAud=1", ["--audience", "none"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.line("aud")?.hasPrefix("  warning") == true, "\(run.output)")
    }

    @Test func wildcardIsAWarningWhenAllowed() async {
        let run = await check("/token/token-only?wildcard=1", ["--allow-wildcard"])
        #expect(run.status == 0)
        #expect(run.line("authorization")?.hasPrefix("  warning") == true)
    }

    @Test func plainHTTPToAnotherHostIsRefusedWithoutSending() async {
        let run = await CommandRun.run([
            "check-endpoint", "--url", "http://token.example.com/token", "--trip-id", "t-1",
        ])
        #expect(run.status == 1)
        #expect(run.line("transport")?.contains("plain http") == true)
        #expect(run.line("status") == nil)
    }

    @Test func connectionRefusedIsAFailure() async {
        let run = await CommandRun.run(["check-endpoint", "--url", "http://127.0.0.1:1/token", "--trip-id", "t-1"])
        #expect(run.status == 1)
        #expect(run.line("request")?.hasPrefix("  failure") == true)
    }

    @Test func jsonOutputIsOneObject() async throws {
        let run = await check(
            "/token/token-only?wrongId=1", ["--json", "--header", "Authorization: Bearer app-secret-123"])
        #expect(run.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(object["verdict"] as? String == "failure")
        let findings = try #require(object["findings"] as? [[String: String]])
        #expect(findings.contains { $0["check"] == "authorization" && $0["verdict"] == "failure" })
        #expect((object["tokenFingerprint"] as? String)?.hasPrefix("tok_") == true)
        #expect(!run.output.contains("app-secret-123"))  // header values are never printed
    }

    @Test func theTrippingTableCoversEveryCheck() {
        // Every failing check the tool can report has a case in the table above.
        let tripped: Set<String> = [
            "status", "redirect", "shape", "jwt", "body-size", "expiry-agreement", "header.alg", "aud", "lifetime",
            "authorization", "clock", "transport", "request",
        ]
        let failing: Set<String> = [
            "transport", "request", "redirect", "status", "body-size", "shape", "jwt", "header.alg", "aud",
            "expiry-agreement", "lifetime", "authorization", "clock",
        ]
        #expect(failing.subtracting(tripped).isEmpty)
    }
}

@Suite("fleetauth command line", .timeLimit(.minutes(10)))
struct FleetAuthCommandTests {
    @Test(arguments: [
        [String](), ["check"], ["check-endpoint"], ["check-endpoint", "--url"],
        ["check-endpoint", "--url", "https://x.example"],
        ["check-endpoint", "--url", "https://x.example", "--vehicle-id", "v", "--trip-id", "t"],
        ["check-endpoint", "--url", "https://x.example", "--trip-id", "t", "--task-id", "k"],
        ["check-endpoint", "--url", "https://x.example", "--vehicle-id", "v", "--format", "xml"],
        ["check-endpoint", "--url", "https://x.example", "--vehicle-id", "v", "--header", "NoColon"],
        ["check-endpoint", "--url", "https://x.example", "--vehicle-id", "v", "--bogus"],
        ["check-endpoint", "--url", "https://x.example", "--vehicle-id", "v", "--timeout", "-1"],
    ])
    func usageErrorsExitWith2(arguments: [String]) async {
        let run = await CommandRun.run(arguments)
        #expect(run.status == 2)
    }

    @Test func helpExitsWith0() async {
        let run = await CommandRun.run(["--help"])
        #expect(run.status == 0 && run.output.contains("usage: fleetauth check-endpoint"))
    }

    @Test func parsesEveryOption() throws {
        let (options, json) = try FleetAuthCommand.parse([
            "check-endpoint", "--url", "https://x.example/t", "--vehicle-id", "v-1", "--task-id", "k-1", "--header",
            "Authorization: Bearer a:b", "--format", "expires-in-seconds", "--post", "--allow-wildcard", "--json",
            "--timeout", "3",
        ])
        #expect(json && options.allowWildcard && options.method == "POST" && options.timeout == 3)
        #expect(options.scope == .vehicle("v-1", taskID: "k-1"))
        #expect(options.headers == ["Authorization": "Bearer a:b"])
        #expect(options.format == .tokenWithExpiresInSeconds)
    }

    @Test func aNonJWTTokenFailsTheJWTCheck() async throws {
        let report = await CheckerFixTests.report(body: Data(#"{"token":"opaque-session-id"}"#.utf8))
        #expect(report.findings.first { $0.check == "jwt" }?.verdict == .failure)
        #expect(report.exitCode == 1)
    }

    @Test(arguments: [
        ([String](), ["check-endpoint"]),
        (["--url", "u", "--vehicle-id", "v"], ["check-endpoint", "--url", "u", "--vehicle-id", "v"]),
        (["check-endpoint", "--url", "u"], ["check-endpoint", "--url", "u"]),
        (["--", "--url", "u"], ["check-endpoint", "--url", "u"]),
        // Xcode adds the targets selected when the command runs from its menu.
        (["--target", "DriverApp", "--url", "u", "--target", "DriverAppTests"], ["check-endpoint", "--url", "u"]),
        (["--target=DriverApp", "--", "--url", "u"], ["check-endpoint", "--url", "u"]),
    ])
    func pluginForwardsItsArguments(given: [String], forwarded: [String]) {
        #expect(PluginArguments.forwarded(given) == forwarded)
    }

    @Test func pluginIsDeclaredWithItsVerbAndNetworkPermission() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(#"verb: "check-token-endpoint""#))
        #expect(manifest.contains(".allowNetworkConnections("))
        #expect(manifest.contains(#".plugin(name: "CheckTokenEndpoint", targets: ["CheckTokenEndpoint"])"#))
        // The plugin compiles the very file whose behaviour is tested above.
        let plugin = root.appendingPathComponent("Plugins/CheckTokenEndpoint/PluginArguments.swift")
        let library = root.appendingPathComponent("Sources/FleetAuthTool/CommandLine/PluginArguments.swift")
        #expect(try String(contentsOf: plugin, encoding: .utf8) == (try String(contentsOf: library, encoding: .utf8)))
        let source = try String(
            contentsOf: root.appendingPathComponent("Plugins/CheckTokenEndpoint/CheckTokenEndpoint.swift"),
            encoding: .utf8)
        #expect(source.contains("PluginArguments.forwarded(arguments)"))
        #expect(source.contains(#"context.tool(named: "fleetauth")"#))
        // Offered on an app's Xcode project too, where only Xcode compiles it.
        #expect(source.contains("extension CheckTokenEndpoint: XcodeCommandPlugin"))
        #expect(source.contains("#if canImport(XcodeProjectPlugin)"))
    }
}

/// Answers every request with one JSON body.
/// The checker's report quoted in the documentation stays what the checker prints.
@Suite("The documented checker report is current", .timeLimit(.minutes(10)))
struct ReadmeCheckerReportTests {
    @Test func theQuotedReportMatchesTheCheckersOutput() async throws {
        let server = try LoopbackServer.running()
        let sample = try #require(
            ReadmeSample(
                startingWith: "fleetauth check-endpoint http://127.0.0.1:8080/token/swift-sample",
                readme: ReadmeSample.document("Sources/FleetAuthCore/Documentation.docc/CheckingYourTokenEndpoint.md")))
        // The article quotes this command: a backend that sends milliseconds under a seconds key
        // and mints wildcard tokens.
        let run = await CommandRun.checkEndpoint([
            "--url",
            server.url("/token/swift-sample?expiryScale=1000&wildcard=1"),
            "--vehicle-id", "v-42",
        ])
        #expect(run.status == 1)
        let difference = sample.firstDifference(from: run.output)
        #expect(difference == nil, "\(difference ?? "")")
    }

    /// The delivery sample backend's driver route, checked without --fleet: it passes,
    /// names the fleet and ends with the provider in Swift.
    @Test func theQuotedDeliveryReportMatchesTheCheckersOutput() async throws {
        let server = try LoopbackServer.running()
        let sample = try #require(
            ReadmeSample(
                startingWith: "fleetauth check-endpoint http://127.0.0.1:8080/token/delivery_driver/",
                readme: ReadmeSample.document("Sources/FleetAuthCore/Documentation.docc/CheckingYourTokenEndpoint.md")))
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/delivery_driver/{vehicleId}"), "--vehicle-id", "dv-9",
        ])
        #expect(run.status == 0, "\(run.output)")
        let difference = sample.firstDifference(from: run.output)
        #expect(difference == nil, "\(difference ?? "")")
    }
}
