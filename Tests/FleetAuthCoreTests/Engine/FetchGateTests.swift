import FleetAuthCore
import Foundation
import Testing

/// The rule of when a scope may ask the token backend again, on its own.
@Suite("Fetch gate: when a scope may ask the backend again", .timeLimit(.minutes(10)))
struct FetchGateTests {
    let scope = AuthorizationScope.vehicle("v-42")
    let retry = RetryPolicy()
    let wall = Date(timeIntervalSince1970: 1_800_000_000)

    func refused(_ status: Int = 401) -> FleetAuthError {
        FleetAuthError(reason: .unexpectedStatus, message: "The token backend answered \(status).", status: status)
    }

    var outage: FleetAuthError {
        FleetAuthError(reason: .unexpectedStatus, message: "The token backend answered 503.", status: 503)
    }

    /// The waits after each of `count` failures in a row, each recorded `at` the moment the
    /// previous wait ends.
    func waits(after count: Int, of error: FleetAuthError, randomUnit: Double = 0.5) -> [TimeInterval] {
        var gate = FetchGate()
        var now: TimeInterval = 100
        var waits: [TimeInterval] = []
        for _ in 0..<count {
            gate.fetchFailed(error, startedAt: now, at: now, wallNow: wall, retry: retry, randomUnit: randomUnit)
            waits.append(gate.nextRequestAt - now)
            now = gate.nextRequestAt
        }
        return waits
    }

    @Test func refusalsDoubleTheCooldownUpToFiveMinutes() {
        #expect(waits(after: 9, of: refused()) == [5, 10, 20, 40, 80, 160, 300, 300, 300])
        #expect(waits(after: 9, of: refused(403)) == [5, 10, 20, 40, 80, 160, 300, 300, 300])
    }

    @Test func theJitterMovesEachWaitByAtMostATenthEitherWayButNeverTheFirst() {
        #expect(waits(after: 8, of: refused(), randomUnit: 0) == [5, 9, 18, 36, 72, 144, 270, 270])
        #expect(waits(after: 8, of: refused(), randomUnit: 1) == [5, 11, 22, 44, 88, 176, 330, 330])
    }

    /// A long outage costs the backend about a request a minute per scope, not one per cooldown.
    @Test func anOutageDoublesTheCooldownUpToAMinute() {
        #expect(waits(after: 7, of: outage) == [5, 10, 20, 40, 60, 60, 60])
        let connection = FleetAuthError(reason: .transportFailure, message: "Connection refused.")
        #expect(waits(after: 3, of: connection) == [5, 10, 20])
        #expect(waits(after: 7, of: outage, randomUnit: 1) == [5, 11, 22, 44, 66, 66, 66])
    }

    /// A `Retry-After` longer than the wait is honoured up to the outage's cap: a backend
    /// whose clock is wrong must not hold the scope for hours.
    @Test func aRetryAfterHoldsTheScopeAtMostTheOutageCap() {
        let later = FleetAuthError(
            reason: .unexpectedStatus, message: "The token backend answered 503.", status: 503, retryAfter: 30)
        #expect(waits(after: 1, of: later) == [30])
        let decades = FleetAuthError(
            reason: .unexpectedStatus, message: "The token backend answered 503.", status: 503, retryAfter: 1e9)
        #expect(waits(after: 2, of: decades) == [60, 60])
    }

    /// A scope nobody asked for in longer than the cap after its gate opened starts over:
    /// its next fetch gets the retry policy's attempts, and the wait after it is the cooldown.
    @Test func anOutageNobodyAskedAboutForAWhileStartsOver() {
        var gate = FetchGate()
        gate.fetchFailed(outage, startedAt: 100, at: 100, wallNow: wall, retry: retry, randomUnit: 0.5)
        gate.fetchFailed(outage, startedAt: 105, at: 105, wallNow: wall, retry: retry, randomUnit: 0.5)
        #expect(gate.nextRequestAt == 115)
        #expect(gate.isInLongOutage(at: 115 + 60))
        #expect(!gate.isInLongOutage(at: 115 + 61))
        gate.fetchFailed(outage, startedAt: 2000, at: 2000, wallNow: wall, retry: retry, randomUnit: 0.5)
        #expect(gate.nextRequestAt == 2005)
    }

    /// A server the device does not trust answers so at every attempt: it backs off as a
    /// refusal does. Plain http, refused before anything is sent, holds only the cooldown.
    @Test func anUntrustedServerBacksOffAsARefusalAndPlainHTTPDoesNot() {
        let untrusted = FleetAuthError(
            reason: .insecureEndpoint, message: "The TLS connection failed.",
            underlyingError: URLError(.serverCertificateUntrusted))
        #expect(waits(after: 4, of: untrusted) == [5, 10, 20, 40])
        let plainHTTP = FleetAuthError(reason: .insecureEndpoint, message: "Plain http to a remote host.")
        #expect(waits(after: 3, of: plainHTTP) == [5, 5, 5])
    }

    @Test func aFailureThatSentNoRequestHoldsOnlyTheCooldown() {
        let noCredential = FleetAuthError(reason: .credentialsUnavailable, message: "No credential.")
        #expect(waits(after: 4, of: noCredential) == [5, 5, 5, 5])
    }

    @Test func noCooldownMeansNoBackoff() {
        var gate = FetchGate()
        for _ in 0..<5 {
            gate.fetchFailed(
                refused(), startedAt: 0, at: 10, wallNow: wall, retry: RetryPolicy(failureCooldown: 0), randomUnit: 0.5)
        }
        #expect(gate.allowsRequest(at: 10))
    }

    @Test func aLongerCooldownIsTheCap() {
        let retry = RetryPolicy(jitter: 0, failureCooldown: 400)
        #expect(FetchGate.wait(after: 1, cap: FetchGate.refusalCap, retry: retry, randomUnit: 0.5) == 400)
        #expect(FetchGate.wait(after: 5, cap: FetchGate.refusalCap, retry: retry, randomUnit: 0.5) == 400)
        #expect(FetchGate.wait(after: 10_000, cap: FetchGate.refusalCap, retry: RetryPolicy(), randomUnit: 1) == 330)
    }

    @Test func aSuccessARestartAndNothingElseStartOver() {
        var gate = FetchGate()
        for _ in 0..<4 {
            gate.fetchFailed(refused(), startedAt: 0, at: 0, wallNow: wall, retry: retry, randomUnit: 0.5)
        }
        #expect(!gate.allowsRequest(at: 39) && gate.allowsRequest(at: 40))
        var restarted = gate
        restarted.restart()
        #expect(restarted.allowsRequest(at: 0))
        restarted.fetchFailed(refused(), startedAt: 0, at: 0, wallNow: wall, retry: retry, randomUnit: 0.5)
        #expect(restarted.nextRequestAt == 5)
        gate.fetchSucceeded(replaced: false)
        #expect(gate.isEmpty && gate.allowsRequest(at: 0))
        gate.fetchFailed(refused(), startedAt: 0, at: 0, wallNow: wall, retry: retry, randomUnit: 0.5)
        #expect(gate.nextRequestAt == 5)
    }

    @Test func whileHeldBackCallersGetTheErrorWithTheWaitAndTheStateItsMoment() throws {
        var gate = FetchGate()
        for _ in 0..<3 {
            gate.fetchFailed(refused(), startedAt: 0, at: 0, wallNow: wall, retry: retry, randomUnit: 0.5)
        }
        let held = try #require(gate.heldError(flightInBackground: nil, at: 10))
        #expect(held.status == 401)
        #expect(held.message.contains("another 10 s after 3 refusals in a row"), "\(held.message)")
        #expect(gate.heldError(flightInBackground: nil, at: 20) == nil)
        // A fetch under way is joined, not held back.
        #expect(gate.heldError(flightInBackground: false, at: 10) == nil)
        #expect(gate.nextRequestDate == wall.addingTimeInterval(20))
    }

    @Test func aFetchRetryingInTheBackgroundThroughAnOutageFailsCallersFast() {
        var gate = FetchGate()
        gate.attemptFailed(outage, attempt: 4, flightStartedAt: 0)
        #expect(gate.nextAttempt == 5)
        #expect(gate.heldError(flightInBackground: false, at: 1) == nil)
        #expect(gate.heldError(flightInBackground: true, at: 1)?.status == 503)
        // Attempts alone hold nothing back once no fetch runs.
        #expect(gate.heldError(flightInBackground: nil, at: 1) == nil)
    }

    @Test func theFirstRejectedTokenIsReplacedAtOnceAndLaterYoungOnesWait() {
        var gate = FetchGate()
        var waits: [TimeInterval] = []
        var now: TimeInterval = 0
        for _ in 0..<8 {
            gate.tokenRejected(age: 1, scope: scope, at: now, wallNow: wall, retry: retry, randomUnit: 0.5)
            waits.append(max(0, gate.nextRequestAt - now))
            now = max(now, gate.nextRequestAt) + 1
        }
        #expect(waits == [0, 10, 20, 40, 80, 160, 300, 300])
        #expect(gate.rejection?.code == .tokenMismatch)
        // A token that lived past a minute before its rejection starts the count over.
        gate.tokenRejected(age: 61, scope: scope, at: now, wallNow: wall, retry: retry, randomUnit: 0.5)
        #expect(gate.allowsRequest(at: now) && gate.rejection == nil)
    }

    @Test func aTokenThatLivedToItsRefreshEndsARunOfRejections() {
        var gate = FetchGate()
        gate.tokenRejected(age: 1, scope: scope, at: 0, wallNow: wall, retry: retry, randomUnit: 0.5)
        gate.tokenRejected(age: 1, scope: scope, at: 0, wallNow: wall, retry: retry, randomUnit: 0.5)
        gate.fetchSucceeded(replaced: false)
        #expect(!gate.isEmpty && !gate.allowsRequest(at: 9))
        gate.fetchSucceeded(replaced: true)
        #expect(gate.isEmpty && gate.allowsRequest(at: 0))
    }
}
