import FleetAuthTestSupport
import FleetAuthTool
import Foundation
import Testing

/// The checker answers a new user's first mistakes with the flag value that fixes them.
@Suite("check-endpoint names the flag that fixes a first mistake", .timeLimit(.minutes(10)))
struct CheckerFirstMistakeTests {
    let server: LoopbackServer
    init() throws { server = try LoopbackServer.running() }

    func check(_ path: String, _ extra: [String] = []) async -> CommandRun {
        await CommandRun.checkEndpoint(["--url", server.url(path), "--vehicle-id", "v-42"] + extra)
    }

    /// The platform sample's answer checked with another --format: the fix names the value.
    @Test func aWrongFormatGetsTheValueThatReadsTheBody() async {
        let run = await check("/token/driver/{vehicleId}", ["--format", "expires-in-seconds"])
        #expect(run.status == 1)
        #expect(
            run.output.contains(
                "fix: the body is the {jwt, expirationTimestamp in absolute ms} shape: pass --format jwt-expiration-timestamp (Swift: format: .jwtWithExpirationTimestamp)"
            ), "\(run.output)")
    }

    /// A placeholder in the host is refused before any request, naming the rule and the fix,
    /// as the SDK refuses it when the provider is made.
    @Test(arguments: ["http://{vehicleId}.localhost:8080/token", "https://api.example.com@{vehicleId}/token"])
    func aPlaceholderInTheHostIsRefusedBeforeAnyRequest(url: String) async {
        let run = await CommandRun.checkEndpoint(["--url", url, "--vehicle-id", "attacker"])
        #expect(run.status == 1)
        #expect(run.line("transport")?.contains("placeholders may stand only in the path and the query") == true)
        #expect(run.output.contains("fix: write the host in full"), "\(run.output)")
    }

    /// A backend whose certificate no device trusts: the certificate is named, with the fix,
    /// after one attempt, not "network error" four times.
    @Test func anUntrustedCertificateIsNamedAfterOneAttempt() async throws {
        let url = try await server.untrustedTLSURL("/token/driver/{vehicleId}")
        let run = await CommandRun.checkEndpoint(["--url", url, "--vehicle-id", "v-42"])
        #expect(run.status == 1)
        #expect(run.line("request")?.contains("The TLS connection to 127.0.0.1 failed") == true, "\(run.output)")
        #expect(run.output.contains("Serve a certificate") && !run.output.contains("attempts"), "\(run.output)")
    }

    @Test func aUnitMixUpGetsTheExpiryUnitThatAgrees() async {
        let run = await check(
            "/token/custom-keys",
            ["--token-key", "accessToken", "--expiry-key", "expiresAtMillis", "--expiry-unit", "seconds"])
        #expect(run.line("expiry-agreement")?.hasPrefix("  failure") == true)
        #expect(
            run.output.contains("pass --token-key accessToken --expiry-key expiresAtMillis --expiry-unit milliseconds"))
    }

    @Test func aRefusedCredentialIsToldFromAMissingOne() async {
        let refused = await check("/token/driver/{vehicleId}", ["--header", "Authorization: Bearer wrong"])
        #expect(
            refused.line("status")?.contains("HTTP 401; its body: a JSON object of 34 bytes with 1 key") == true,
            "\(refused.output)")
        #expect(refused.output.contains("the backend refused the credential sent with --header (Authorization)"))
        #expect(!refused.output.contains("wrong"))
        let missing = await check("/token/driver/{vehicleId}?status=401")
        #expect(missing.output.contains("send it with --header 'Authorization: Bearer <credential>'"))
        let accepted = await check("/token/driver/{vehicleId}", ["--header", "Authorization: Bearer app-credential"])
        #expect(accepted.status == 0, "\(accepted.output)")
    }

    /// A header that is no credential is not called a refused credential.
    @Test func aHeaderThatIsNoCredentialIsNotCalledRefused() async {
        let run = await check("/token/driver/{vehicleId}?status=401", ["--header", "X-App-Version: 3.1"])
        #expect(run.status == 1)
        #expect(
            run.output.contains(
                "fix: no credential was sent (no Authorization header; --header sent only X-App-Version)"),
            "\(run.output)")
        #expect(!run.output.contains("refused the credential"))
    }

    /// Another audience: the fix names the --audience value and the SDK's setting.
    @Test func anotherAudienceNamesTheFlagAndTheSetting() async {
        let run = await check("/token/token-only", ["--audience", "https://fleet.example.com/"])
        #expect(run.line("aud")?.hasPrefix("  failure") == true, "\(run.output)")
        #expect(
            run.output.contains(
                #"or, if your fleet service expects https://fleetengine.googleapis.com/, pass --audience https://fleetengine.googleapis.com/ (Swift: TokenRules(expectedAudience: "https://fleetengine.googleapis.com/"))"#
            ), "\(run.output)")
    }

    /// A trip checked on the driver route gets a vehicle token for its ID: the fix names the route.
    @Test func aTripOnTheDriverRouteIsToldTheRoute() async {
        let run = await CommandRun.checkEndpoint([
            "--url", server.url("/token/driver/{tripId}"), "--trip-id", "t-7",
        ])
        #expect(run.status == 1)
        #expect(
            run.line("authorization")?.hasSuffix(
                #"a vehicle token for this ID (vehicleid: "t-7"), not a trip token: the URL looks like a driver token route"#
            ) == true, "\(run.output)")
        #expect(
            run.output.contains(
                "fix: a consumer provider needs the consumer token route, whose tokens name the trip under `tripid`: point --url at it"
            ), "\(run.output)")
    }

    @Test func aPlaceholderOfAnotherKindIsNotOfferedBack() async {
        let run = await check("/token/driver/{tripId}")
        let fix = run.output.split(separator: "\n").first { $0.contains("fix:") } ?? ""
        #expect(fix.contains("{id}, {vehicleId} or {deliveryVehicleId}"), "\(run.output)")
        #expect(!fix.contains("{tripId}"))
    }

    @Test func a404DescribesTheBodyAndNamesThePlaceholders() async {
        let run = await check("/token/drivr/{vehicleId}")
        #expect(
            run.line("status")?.contains("HTTP 404; its body: a JSON object of 20 bytes with 1 key") == true,
            "\(run.output)")
        #expect(run.output.contains("check the --url path"))
    }

    @Test func clearTextToARemoteHostHasAnOptIn() async {
        let refused = await CommandRun.run(["check-endpoint", "--url", "http://10.0.0.5/token", "--vehicle-id", "v-42"])
        #expect(refused.output.contains("pass --allow-insecure-http"))
        let allowed = try? FleetAuthCommand.parse([
            "check-endpoint", "--url", "http://10.0.0.5/token", "--vehicle-id", "v-42", "--allow-insecure-http",
        ])
        #expect(allowed?.options.allowsInsecureHTTP == true)
    }

    @Test(arguments: [
        ("--vehicle", "--vehicle-id"), ("--allow-insecure", "--allow-insecure-http"), ("--fromat", "--format"),
    ])
    func aMistypedOptionGetsTheNearestOne(typed: String, meant: String) async {
        let run = await CommandRun.run(["check-endpoint", "--url", "https://a.example/t", typed, "x"])
        #expect(run.status == 2)
        #expect(run.errors.hasPrefix("fleetauth: unknown option \(typed); did you mean \(meant)?"), "\(run.errors)")
    }

    @Test(arguments: [
        ("jwtWithExpirationTimestamp", "jwt-expiration-timestamp"), ("expires-in-second", "expires-in-seconds"),
    ])
    func anUnknownFormatGetsTheFlagValue(typed: String, meant: String) async {
        let run = await check("/token/driver/{vehicleId}", ["--format", typed])
        #expect(run.status == 2)
        #expect(run.errors.hasPrefix("fleetauth: unknown format \(typed); did you mean \(meant)?"), "\(run.errors)")
    }

    /// A token for another vehicle, the ID sent as a query item: the fix says so.
    @Test func aTokenForAnotherIDSaysHowTheIDWasSent() async {
        let run = await check("/token/jwt-expiration-timestamp?wrongId=1")
        #expect(run.line("authorization")?.contains(#"(vehicleid: "someone-else")"#) == true, "\(run.output)")
        #expect(
            run.output.contains("the ID went as the query item vehicleId=v-42, added because --url has no placeholder"))
    }

    @Test func aJSONBodyCheckedAsPlainGetsTheFormatThatReadsIt() async {
        let run = await check("/token/driver/{vehicleId}", ["--format", "plain"])
        #expect(run.line("shape")?.hasPrefix("  failure") == true, "\(run.output)")
        #expect(run.output.contains("pass --format jwt-expiration-timestamp"))
    }

    /// The usage promises that no header value is printed: a backend that echoes every
    /// header in its 401 body, or redirects to another origin, cannot make the checker print
    /// one, nor the Basic credential's decoded pair. A forged line cannot be printed either.
    @Test func aBackendEchoingTheHeadersCannotMakeTheCheckerPrintThem() async throws {
        let headers = ["--header", "Authorization: Basic dXNlcjpwYXNzd29yZDE=", "--header", "X-Api-Key: key-7f3e21"]
        let echoed = await check("/conformance/echo-401", headers)
        #expect(echoed.status == 1)
        #expect(echoed.line("status")?.contains("error `invalid_token`") == true, "\(echoed.output)")
        let redirected = await check("/conformance/redirect-elsewhere/302/checker", headers)
        #expect(redirected.line("redirect")?.contains("to another origin (http://127.0.0.1:") == true)
        for run in [echoed, redirected] {
            for secret in ["dXNlcjpwYXNzd29yZDE=", "user:password1", "password1", "key-7f3e21"] {
                #expect(!run.output.contains(secret), "\(secret) in \(run.output)")
            }
        }
        #expect(try await server.requestCount(key: "elsewhere-checker") == 0)
    }
}
