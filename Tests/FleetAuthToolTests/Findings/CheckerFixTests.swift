import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTool
import Foundation
import Testing

/// Each fix names the real cause: answers that used to get a fix pointing elsewhere.
@Suite("Checker fixes point at the cause", .timeLimit(.minutes(10)))
struct CheckerFixTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// The checker's report for one in-memory answer, on a clock at `now`.
    static func report(
        status: Int = 200, headers: [String: String] = ["Content-Type": "application/json"], body: Data
    ) async -> EndpointReport {
        let clock = ManualWallClock(now: now)
        let transport = InMemoryTransport(clock: clock)
        transport.route("/token") { _ in TransportResponse(status: status, headers: headers, body: body) }
        var options = EndpointChecker.Options(url: "https://backend.example.com/token", scope: .vehicle("v-42"))
        options.retry = RetryPolicy(maximumAttempts: 1, failureCooldown: 0)
        return await EndpointChecker(options: options, transport: transport, clock: clock).run()
    }

    static func token(issuedAt: Date) -> String {
        InMemoryTokenBackend.jwt(payload: [
            "aud": TokenRules.fleetServiceAudience, "iat": Int(issuedAt.timeIntervalSince1970),
            "exp": Int(issuedAt.timeIntervalSince1970) + 3600, "authorization": ["vehicleid": "v-42"],
        ])
    }

    func finding(_ report: EndpointReport, _ check: String) -> Finding? {
        report.findings.first { $0.check == check }
    }

    @Test func anHTMLLoginPageIsNamedAsAWebPage() async {
        let report = await Self.report(
            headers: ["Content-Type": "text/html; charset=utf-8"],
            body: Data("<!doctype html><html><body><form action=/login></form></body></html>".utf8))
        let shape = finding(report, "shape")
        #expect(shape?.verdict == .failure)
        #expect(shape?.seen.hasPrefix("an HTML page") == true, "\(report.text)")
        #expect(shape?.fix.contains("login or error page") == true)
        #expect(!report.text.contains("dot-separated"))
    }

    @Test(arguments: [#"{"token": "abc.def.ghi", "expiration": NaN}"#, #"{"token": "abc.def"#])
    func aBodyThatIsNotQuiteJSONIsNamedSo(body: String) async {
        let report = await Self.report(body: Data(body.utf8))
        let shape = finding(report, "shape")
        #expect(shape?.verdict == .failure)
        #expect(shape?.seen.hasPrefix("starts as JSON but does not parse") == true, "\(report.text)")
        #expect(!report.text.contains("expected Swift sample"))
    }

    @Test func anOldTokenFromABackendWithTheRightDateIsCalledOld() async {
        let body = try! JSONSerialization.data(withJSONObject: ["token": Self.token(issuedAt: Self.now - 3000)])
        let report = await Self.report(
            headers: ["Content-Type": "application/json", "Date": HTTPDate.format(Self.now)], body: body)
        let clock = finding(report, "clock")
        #expect(clock?.verdict == .failure)
        #expect(clock?.seen.contains("the backend served an old token") == true, "\(report.text)")
        #expect(clock?.fix == "mint a new token per request instead of serving a stored one")
        #expect(!report.text.contains("NTP"))
    }

    @Test func aBackendWhoseClockIsOffStillHearsAboutNTP() async {
        let ahead = Self.now + 3 * 3600
        let body = try! JSONSerialization.data(withJSONObject: ["token": Self.token(issuedAt: ahead)])
        let report = await Self.report(
            headers: ["Content-Type": "application/json", "Date": HTTPDate.format(ahead)], body: body)
        #expect(finding(report, "clock")?.fix.contains("NTP") == true, "\(report.text)")
    }

    @Test func twoDateHeadersAreNamedAsTwo() async {
        let body = try! JSONSerialization.data(withJSONObject: ["token": Self.token(issuedAt: Self.now)])
        let two = "\(HTTPDate.format(Self.now)), \(HTTPDate.format(Self.now))"
        let report = await Self.report(headers: ["Content-Type": "application/json", "Date": two], body: body)
        let date = finding(report, "date-header")
        #expect(date?.seen.hasPrefix("sent more than once") == true, "\(report.text)")
        #expect(date?.fix.contains("exactly one Date header") == true)
    }

    @Test func aMissingDateHeaderIsCalledMissing() async {
        let body = try! JSONSerialization.data(withJSONObject: ["token": Self.token(issuedAt: Self.now)])
        let report = await Self.report(body: body)
        #expect(finding(report, "date-header")?.seen == "missing", "\(report.text)")
    }
}
