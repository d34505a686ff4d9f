import ExampleSupport
import FleetAuthCore
import FleetAuthDriver
import Foundation
import Testing

@testable import ConsumerApp
@testable import CustomTransport
@testable import DriverApp

@Suite("Examples keep working", .timeLimit(.minutes(10)))
struct ExamplesTests {
    @Test func driverAppEmbeddedRunIsClean() async throws {
        var options = DriverSimulation.Options()
        options.hours = 2
        let report = try await DriverSimulation.run(options)
        #expect(report.updatesSent == 1440)
        #expect(report.updatesAccepted == report.updatesSent)
        #expect(report.updatesFailed == 0 && report.callsRejectedByFleet == 0)
        #expect(report.tokenFetches <= report.minimumTokenFetches + 1)
        #expect(report.callersThatWaited == 1)  // only the very first update waited for a token
        #expect(report.description.contains("rejected updates        0"))
    }

    @Test func readmeQuotesTheDriverAppReportAsItIs() async throws {
        let sample = try #require(ReadmeQuote(startingWith: "DriverApp report"))
        var options = DriverSimulation.Options()
        options.hours = 0.5
        let report = try await DriverSimulation.run(options)
        let difference = sample.firstDifference(from: report.description)
        #expect(difference == nil, "\(difference ?? "")")
    }

    @Test func driverAppRunsADeliveryVehicle() async throws {
        var options = DriverSimulation.Options()
        options.hours = 1
        options.fleet = .delivery
        let report = try await DriverSimulation.run(options)
        #expect(report.updatesSent == 720 && report.updatesAccepted == 720)
        #expect(report.callsRejectedByFleet == 0)
        #expect(report.description.contains("delivery vehicle: PATCH deliveryVehicles"))
    }

    @Test func driverAppWithShortTokensStillNeverFails() async throws {
        var options = DriverSimulation.Options()
        options.hours = 0.5
        options.tokenLifetime = 600
        let report = try await DriverSimulation.run(options)
        #expect(report.updatesFailed == 0 && report.callsRejectedByFleet == 0)
        #expect(report.tokenFetches <= report.minimumTokenFetches + 2)
    }

    @Test func consumerAppFollowsEveryTripToTheEnd() async throws {
        var options = TripSimulation.Options()
        options.hours = 1
        let report = try await TripSimulation.run(options)
        #expect(report.errors == 0 && report.callsRejectedByFleet == 0)
        #expect(report.snapshots.count == 3 && report.snapshots.values.allSatisfy { $0 == 360 })
        #expect(report.finalStatus.values.allSatisfy { $0 == "COMPLETE" })
        // The first token, its refresh moved to a random point of its life (the fleet's
        // spread), and at most one more refresh within the hour.
        #expect(report.tokensPerTrip.values.allSatisfy { (1...3).contains($0) })
    }

    @Test func consumerAppFollowsShipmentsBesideTrips() async throws {
        var options = TripSimulation.Options()
        options.hours = 0.5
        options.trackingIDs = ["ship-1", "ship-2"]
        let report = try await TripSimulation.run(options)
        #expect(report.errors == 0 && report.callsRejectedByFleet == 0)
        #expect(report.snapshots["ship-1"] == 180 && report.finalStatus["ship-2"] == "OPEN")
        #expect(report.description.contains("tracked shipments: ship-1, ship-2"))
    }

    @Test func customTransportConformsAndLogsNoSecrets() async throws {
        let log = LogLines()
        let result = try await CustomTransportExample.run(log: { line in log.append(line) })
        #expect(result.conformanceFailures.isEmpty, "\(result.conformanceFailures)")
        #expect(log.all.count > 10)
        for line in log.all {
            for part in result.token.value.split(separator: ".") { #expect(!line.contains(part)) }
        }
        #expect(log.all.filter { $0.hasPrefix("→") }.allSatisfy { $0.contains("X-App-Version") })
    }

    @Test func commandLineOptionsParseValuesAndFlags() throws {
        let names: Set<String> = ["token-url", "hours", "header"]
        let options = try CommandLineOptions(
            ["--token-url", "https://t.example", "--help", "--hours", "2", "--header", "A: 1", "--header", "B:2"],
            valueNames: names)
        #expect(options.value("token-url") == "https://t.example")
        #expect(try options.number("hours") == 2)
        #expect(try options.headers() == ["A": "1", "B": "2"])
        #expect(options.flag("help") && !options.flag("verbose"))
        #expect(try CommandLineOptions.format(named: "expires-in-seconds") == .tokenWithExpiresInSeconds)
        #expect(options.rules() == TokenRules())
        #expect(
            try CommandLineOptions(["--audience", "none"], valueNames: ["audience"]).rules()
                == TokenRules(expectedAudience: nil))
    }

    @Test(arguments: [
        ["stray"], ["--bogus"], ["--hours"], ["--hours", "abc"], ["--hours", "-1"], ["--header", "no colon"],
        ["--format", "xml"], ["--log-level", "verbose"],
    ])
    func badCommandLinesAreUsageErrors(arguments: [String]) {
        #expect(throws: CommandLineOptions.UsageError.self) {
            let options = try CommandLineOptions(arguments, valueNames: ["hours", "header", "format", "log-level"])
            _ = try options.number("hours")
            _ = try options.headers()
            _ = try options.format()
            _ = try options.logLevel()
        }
    }

    @Test func logLevelDefaultsToInfoAndTakesEveryLevelByName() throws {
        #expect(try CommandLineOptions([], valueNames: ["log-level"]).logLevel() == .info)
        for level in TokenEventLevel.allCases {
            #expect(try CommandLineOptions(["--log-level", "\(level)"], valueNames: ["log-level"]).logLevel() == level)
        }
    }

    @Test func customTransportTakesOnlyHelp() {
        typealias Invocation = CustomTransportExample.Invocation
        #expect(Invocation([]) == .run)
        #expect(Invocation(["--help"]) == .help)
        #expect(Invocation(["--bogus"]) == .usageError("unknown option --bogus"))
        #expect(Invocation(["--help", "--bogus"]) == .usageError("unknown option --help"))
        #expect(Invocation(["stray"]) == .usageError("unexpected argument stray"))
    }
}

/// Log lines collected from any thread.
final class LogLines: @unchecked Sendable {
    // Safe because `lines` is only touched while `lock` is held.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// The test that "Testing your app" shows is the app team's test this package runs, word for word.
@Test func theTestingArticleShowsTheAppTeamsTestAsItRuns() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let article = try String(
        contentsOf: root.appendingPathComponent("Sources/FleetAuthInMemory/Documentation.docc/TestingYourApp.md"),
        encoding: .utf8)
    let test = try String(
        contentsOf: root.appendingPathComponent("Examples/Tests/AppTeamTests/ReportingThroughAnOutageTests.swift"),
        encoding: .utf8)
    let shown = article.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first
    #expect(shown == test, "copy Examples/Tests/AppTeamTests/ReportingThroughAnOutageTests.swift into the article")
}

/// A mistyped option is answered with the nearest one the example takes.
@Test(arguments: [
    ("--trip-id", "unknown option --trip-id; did you mean --trip-ids?"),
    ("--timout", "unknown option --timout; did you mean --timeout?"),
    ("--zzz", "unknown option --zzz"),
])
func aMistypedOptionGetsTheNearestOne(argument: String, message: String) {
    #expect(throws: CommandLineOptions.UsageError.self) {
        try CommandLineOptions([argument, "x"], valueNames: ["trip-ids", "timeout", "token-url"])
    }
    do {
        _ = try CommandLineOptions([argument, "x"], valueNames: ["trip-ids", "timeout", "token-url"])
    } catch let error as CommandLineOptions.UsageError {
        #expect(error.message == message)
    } catch {
        Issue.record("unexpected \(error)")
    }
}
