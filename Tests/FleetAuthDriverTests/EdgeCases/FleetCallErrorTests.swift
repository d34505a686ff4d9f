import FleetAuthDriver
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

@Suite("Fleet calls: errors that name the cause, and providers that misbehave", .timeLimit(.minutes(10)))
struct FleetCallErrorTests {
    /// A token whose three parts are long enough to be recognised when quoted.
    static let token =
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJ2ZWhpY2xlaWQiOiJ2LTQyIiwiZXhwIjoxNzAwMDAwMDAwfQ.c2lnbmF0dXJlLXNlZ21lbnQtdGhhdC1pcy1zZWNyZXQ"

    @Test(arguments: [0, 1, 2])
    func aRejectionQuotingAnyPartOfTheTokenLosesIt(part: Int) {
        let quoted = Self.token.split(separator: ".")[part]
        let body = Data(#"{"error":{"message":"Bad token part \#(quoted) here"}}"#.utf8)
        let rejection = TokenRejection(status: 401, body: body, token: Self.token)
        #expect(!rejection.message.contains(quoted))
        #expect(rejection.message.hasPrefix("Bad token part [token part] here"))
    }

    @Test func aRejectionQuotingAFragmentOfTheSignatureLosesIt() {
        let signature = Self.token.split(separator: ".")[2]
        let fragment = signature.prefix(20)
        let rejection = TokenRejection(
            status: 403, body: Data("signature \(fragment)… invalid".utf8), token: Self.token)
        #expect(!rejection.message.contains(fragment))
        // Ordinary words stay.
        #expect(rejection.message.contains("signature") && rejection.message.contains("invalid"))
    }

    @Test func aRejectionsClosingPeriodDoesNotDoubleInASentence() {
        let rejection = TokenRejection(status: 403, message: "Permission denied: token does not authorize v-42.")
        #expect(rejection.description == "HTTP 403: Permission denied: token does not authorize v-42")
    }

    @Test func aFleetServiceThatRefusesTheConnectionIsNamed() async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42")
        f.transport.setFaultInjector { request, _ in
            request.url.host == "fleet.example.com" ? .connectionFailure : nil
        }
        do {
            _ = try await reporter.report(f.location())
            Issue.record("expected a network fault")
        } catch {
            #expect(error.fault == .network)
            #expect(
                error.message.hasPrefix(
                    "PUT /v1/providers/demo-project/vehicles/v-42 to the fleet service got no answer (connection refused"
                ))
            #expect(!error.message.contains("updateMask"))
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTokenBackendThatRefusesTheConnectionIsNamed() async throws {
        let f = try ReporterFixture()
        f.transport.setFaultInjector { request, _ in
            request.url.host == "backend.example.com" ? .connectionFailure : nil
        }
        let reporter = try f.reporter("v-42")
        // Let the retries run out on the manual clock.
        let outcome = await f.clock.runToCompletion(horizon: 60) { try await reporter.report(f.location()) }
        do {
            _ = try outcome.get()
            Issue.record("expected a token fault")
        } catch let error as FleetServiceError {
            #expect(error.fault == .token)
            #expect(error.message.contains("connection refused"), "\(error.message)")
        }
    }

    /// The README's promise: a 404 from the token backend names the token URL as sent, also
    /// when it reaches the app through the reporter.
    @Test func aTokenBackend404ReachesTheReporterWithTheTokenURL() async throws {
        let f = try ReporterFixture()
        f.transport.setFaultInjector { request, _ in
            request.url.host == "backend.example.com" ? .status(404) : nil
        }
        let reporter = try f.reporter("v-42")
        do {
            _ = try await reporter.report(f.location())
            Issue.record("expected a token fault")
        } catch {
            #expect(error.fault == .token)
            #expect(
                error.message.hasPrefix(
                    "No token could be fetched for vehicle v-42 (token URL https://backend.example.com/driver-token?vehicleId=hidden): "
                ), "\(error.message)")
        }
    }

    @Test func aFleetService404NamesTheMethodAndPath() async throws {
        let f = try ReporterFixture()
        let reporter = try f.reporter("v-42")
        f.transport.setFaultInjector { request, _ in
            request.url.host == "fleet.example.com" ? .status(404) : nil
        }
        do {
            _ = try await reporter.report(f.location())
            Issue.record("expected a service fault")
        } catch {
            #expect(error.fault == .service && error.status == 404)
            #expect(
                error.message
                    == "The fleet service answered HTTP 404 to PUT /v1/providers/demo-project/vehicles/v-42; check the provider ID, the vehicle ID and the fleet flavor."
            )
        }
    }

    /// A provider that never calls its completion.
    final class SilentProvider: DriverAuthorization {
        let calls = LockedState(0)
        func fetchToken(
            with authorizationContext: DriverAuthorizationContext?,
            completion: @escaping AuthTokenFetchCompletionHandler
        ) {
            calls.withLock { $0 += 1 }
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aProviderThatNeverAnswersFailsTheUpdateAtItsDeadlineAndTheNextOneIsNotStuck() async throws {
        let f = try ReporterFixture()
        let silent = SilentProvider()
        let reporter = try f.reporter("v-42", authorization: silent)
        f.clock.offClockGrace = 0.1  // nothing will come back from off the clock
        let first = f.clock.startSimulated { try await reporter.report(f.location()) }
        let second = f.clock.startSimulated { try await reporter.report(f.location(1)) }
        // The first waits for the provider; at its 60-s deadline it fails, then the second
        // gets its turn and its own deadline.
        await f.clock.run(until: f.clock.now().addingTimeInterval(130))
        for task in [first, second] {
            do {
                _ = try await task.value
                Issue.record("expected a token fault")
            } catch let error as FleetServiceError {
                #expect(error.fault == .token)
                #expect(error.message.hasPrefix("The token provider did not answer within 60 s"))
            }
        }
        #expect(silent.calls.withLock { $0 } == 2)
        #expect(f.fleet.calls.isEmpty)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anUpdateWaitingOnFleetAuthsProviderAddsNoDeadlineOfItsOwn() async throws {
        // FleetAuth's provider answers within its retry deadline, so the reporter does not
        // race it (a race is two tasks for every vehicle of a fleet that starts together):
        // while the update waits for its first token, the clock holds only the token
        // request's latency and timeout, not the 60-s deadline a silent provider gets.
        let f = try ReporterFixture()
        f.transport.latency = 0.2
        let reporter = try f.reporter("v-42")
        let update = f.clock.startSimulated { try await reporter.report(f.location()) }
        try await f.clock.settledSleepers(count: 2, within: 60)
        #expect(f.clock.sleeperCount == 2)
        #expect(f.clock.sleeperCount(within: 16) == 2)
        await f.clock.run(until: f.clock.now().addingTimeInterval(1))
        #expect(try await update.value.status == 200)

        // A provider of the app's own is still raced.
        let silent = SilentProvider()
        let other = try f.reporter("v-7", authorization: silent)
        f.clock.offClockGrace = 0.1
        let waiting = f.clock.startSimulated { try await other.report(f.location()) }
        try await f.clock.settledSleepers(count: 1, within: 61)
        #expect(f.clock.sleeperCount(within: 59) == 0)
        waiting.cancel()
        _ = await waiting.result
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [false, true]) func aCancelledUpdateWaitingOnASilentProviderEndsAtOnce(relayed: Bool) async throws
    {
        let f = try ReporterFixture()
        let silent = SilentProvider()
        let reporter = try f.reporter("v-42", authorization: silent, relayed: relayed)
        f.clock.offClockGrace = 0.1  // nothing will come back from off the clock
        let ended = LockedState<(any Error)?>(nil)
        let first = f.clock.startSimulated {
            do { _ = try await reporter.report(f.location()) } catch { ended.withLock { $0 = error } }
        }
        await f.clock.settle()
        #expect(silent.calls.withLock { $0 } == 1)
        first.cancel()
        // Ended once the clock's work settled, without the clock moving: cancellation, not the
        // deadline, ended it (a wait the cancellation missed fails here, not at the time limit).
        let error = try await f.clock.settled { ended.withLock { $0 } }
        #expect(error is FleetServiceError)
        #expect(f.clock.uptime() == ManualWallClock().uptime())
    }

    /// Cancelling an update that waits for its vehicle's first token from FleetAuth's provider
    /// ends the update once the clock's work settles, while the provider still fetches.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [false, true]) func aCancelledUpdateWaitingForItsFirstTokenEndsAtOnce(relayed: Bool) async throws {
        let f = try ReporterFixture()
        f.transport.latency = 0.2
        let reporter = try f.reporter("v-42", relayed: relayed)
        let ended = LockedState<(any Error)?>(nil)
        let first = f.clock.startSimulated {
            do { _ = try await reporter.report(f.location()) } catch { ended.withLock { $0 = error } }
        }
        try await f.clock.settledSleepers(count: 1, within: 1)
        first.cancel()
        let error = try await f.clock.settled { ended.withLock { $0 } }
        #expect((error as? FleetServiceError)?.underlyingError is CancellationError, "\(String(describing: error))")
        #expect(f.fleet.calls.isEmpty)
    }

    @Test func expiryDoesNotDependOnTheCallersClock() async throws {
        // The provider runs on one manual clock, the reporter on another that is far ahead
        // in uptime: the token is still fresh, because its expiry counts on its own clock.
        let f = try ReporterFixture()
        let reporterClock = ManualWallClock()
        reporterClock.advance(by: 7200)
        let reporter = try VehicleReporter(
            fleetService: FleetServiceEndpoint(
                baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
            vehicleID: "v-42", authorization: f.provider, transport: f.transport, clock: reporterClock)
        let receipt = try await reporter.report(f.location())
        #expect(receipt.status == 200 && receipt.attempts == 1)
        #expect(f.backend.mintedCount == 1)
        // And the other way round: once the provider's clock passes the token's expiry,
        // a reporter whose clock stood still still sees it expired.
        let token = try await f.provider.token(for: DriverAuthorizationContext(vehicleID: "v-42"))
        f.clock.advance(by: 3700)
        #expect(token.remainingLife(wallNow: reporterClock.now()) < 0)
    }
}
