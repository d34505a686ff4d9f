import FleetAuthCore
import FleetAuthTestSupport
import FleetAuthTool
import Foundation
import Testing

/// Without `--fleet` the token's claim key says which fleet it is for, and a report that
/// passes ends with the app's provider in Swift, configured as checked.
@Suite("check-endpoint infers the fleet and prints the provider", .timeLimit(.minutes(10)))
struct CheckerFleetAndSwiftTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    /// The delivery sample backend's token, checked as a user first does: without --fleet.
    @Test func theDeliverySampleBackendPassesWithoutFleetAndSaysWhichFleet() async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/delivery_driver/{vehicleId}"), "--vehicle-id", "dv-9",
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(
            run.line("fleet")
                == "  ok       fleet             delivery, inferred from the token's `deliveryvehicleid` claim (no --fleet given): the app needs `TokenRules(fleet: .delivery)`",
            "\(run.output)")
        #expect(
            run.line("authorization")?.contains(
                "ok       authorization     covers vehicle dv-9 under `deliveryvehicleid`") == true)
        let snippet = """
              format: --format expiration-timestamp-ms; the app's provider, in Swift:
                let provider = try DriverTokenProvider(
                    endpoint: TokenEndpoint(
                        url: "\(server.url("/token/delivery_driver/{vehicleId}"))",
                        format: .tokenWithExpirationTimestampMilliseconds
                    ),
                    transport: URLSessionTransport(),
                    rules: TokenRules(fleet: .delivery)
                )
            """
        #expect(run.output.contains(snippet), "\(run.output)")
        #expect(!run.output.contains("eyJ"))
    }

    /// An on-demand token needs no setting: no fleet line, and no `rules:` in the Swift.
    @Test func anOnDemandTokenWithoutFleetNeedsNoRules() async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/driver/{vehicleId}"), "--vehicle-id", "v-42",
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.line("fleet") == nil, "\(run.output)")
        #expect(run.output.contains("        transport: URLSessionTransport()\n    )\n"), "\(run.output)")
        #expect(!run.output.contains("rules:"))
    }

    /// An explicit --fleet that disagrees with the token still fails, in both directions.
    @Test(arguments: [
        ("/token/delivery_driver/{vehicleId}", "on-demand", "pass --fleet delivery"),
        ("/token/driver/{vehicleId}", "delivery", "pass --fleet on-demand"),
    ])
    func anExplicitFleetThatDisagreesStillFails(path: String, fleet: String, hint: String) async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url(path), "--vehicle-id", "dv-1", "--fleet", fleet,
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.line("authorization")?.hasPrefix("  failure") == true, "\(run.output)")
        #expect(run.output.contains(hint), "\(run.output)")
        #expect(run.line("fleet") == nil)
        // A configuration that fails is not offered for pasting: the format line stays as it was.
        #expect(!run.output.contains("let provider"), "\(run.output)")
        #expect(run.output.contains("(Swift: ."), "\(run.output)")
    }

    /// An explicit --fleet delivery that agrees: no line to infer, but the rules it needs.
    @Test func anExplicitDeliveryFleetIsInTheRules() async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/delivery_driver/{vehicleId}"), "--vehicle-id", "dv-9", "--fleet", "delivery",
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.line("fleet") == nil)
        #expect(run.output.contains("    rules: TokenRules(fleet: .delivery)\n"), "\(run.output)")
    }

    /// Headers appear with their names; a value that may be a credential never does.
    @Test func theSwiftShowsHeadersButNoCredential() async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/driver/{vehicleId}"), "--vehicle-id", "v-42",
            "--header", "Authorization: Bearer app-credential", "--header", "X-App-Version: 3.1",
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(
            run.output.contains(
                #"headers: { _ in ["Authorization": "Bearer \(<#credential#>)", "X-App-Version": "3.1"] }"#),
            "\(run.output)")
        #expect(!run.output.contains("app-credential"))
    }

    /// The consumer's provider for a trip, its rules for --audience and --allow-wildcard.
    @Test func aTripGetsTheConsumerProviderAndItsRules() async throws {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/consumer/{tripId}"), "--trip-id", "t-7", "--audience", "none",
            "--allow-wildcard", "--json",
        ])
        #expect(run.status == 0, "\(run.output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let swift = try #require(object["swiftProvider"] as? String, "\(run.output)")
        #expect(swift.hasPrefix("let provider = try ConsumerTokenProvider(\n"), "\(swift)")
        #expect(swift.contains("rules: TokenRules(expectedAudience: nil, allowsWildcard: true)\n)"), "\(swift)")
    }

    /// The URL as the app writes it: no user info, and no query value that may be a key.
    @Test(arguments: [
        (
            "https://u:p@api.example.com/token/driver/{vehicleId}",
            #""https://api.example.com/token/driver/{vehicleId}""#
        ),
        (
            "https://api.example.com/token?key=s3cr3t&vehicleId={vehicleId}&x=",
            #""https://api.example.com/token?key=\(<#value#>)&vehicleId={vehicleId}&x=""#
        ),
        (#"https://api.example.com/t"o\ken"#, #""https://api.example.com/t\"o\\ken""#),
    ])
    func theURLIsWrittenWithoutSecrets(url: String, swift: String) {
        #expect(EndpointChecker.swiftURL(url, scope: .vehicle("v-1")) == swift)
    }
}
