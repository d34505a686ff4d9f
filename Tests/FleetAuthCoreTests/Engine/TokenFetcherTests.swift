import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

extension TokenFetcher {
    /// A fetch on its own, as the engine's first waiter would run it: transient failures are
    /// retried within the retry policy's attempts and deadline.
    func fetch(_ scope: AuthorizationScope) async -> Result<AuthToken, FleetAuthError> {
        let deadline = clock.uptime() + retry.deadline
        return await fetch(scope, deadline: { deadline }) { _, attempt, retryAt in
            attempt < retry.maximumAttempts && retryAt < deadline
        }
    }
}

@Suite("Token fetcher: attempts, timeouts, retries", .timeLimit(.minutes(10)))
struct TokenFetcherTests {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let events = EventRecorder()

    init() {
        transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
    }

    func fetcher(retry: RetryPolicy, timeout: TimeInterval = 15) -> TokenFetcher {
        let events = self.events
        return TokenFetcher(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token", timeout: timeout), transport: transport,
            clock: clock, refresh: RefreshPolicy(), retry: retry, emit: { events.record(TokenEvent($0)) },
            randomUnit: { 0.5 })
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func transientFailuresAreRetriedWithBackoffUntilOneSucceeds() async throws {
        transport.inject([.status(503), .status(503)])
        let fetcher = fetcher(retry: RetryPolicy(initialBackoff: 0.5, multiplier: 2, jitter: 0.2))
        let start = clock.uptime()
        let token = try await clock.runToCompletion { await fetcher.fetch(.vehicle("v-42")) }.get().get()
        #expect(token.scope == .vehicle("v-42"))
        #expect(transport.requestCount == 3)
        // Backoffs of 0.5 s and 1 s (the random draw is the middle of the jitter), nothing else.
        #expect(clock.uptime() - start == 1.5)
        let retries = events.all.compactMap { event -> TimeInterval?? in
            if case .fetchFailed(_, _, _, let retryIn) = event.detail { return retryIn }
            return nil
        }
        #expect(retries == [0.5, 1.0])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aPermanentFailureIsNotRetried() async throws {
        transport.inject([.status(400)])
        let fetcher = fetcher(retry: RetryPolicy())
        let result = try await clock.atOnce { await fetcher.fetch(.vehicle("v-42")) }
        #expect(throws: FleetAuthError.self) { try result.get() }
        #expect((try? result.get()) == nil)
        if case .failure(let error) = result { #expect(error.reason == .unexpectedStatus) }
        #expect(transport.requestCount == 1)
    }

    @Test func aCancellationErrorThatTheTransportThrowsOnItsOwnIsATransportFailure() async {
        let transport = InMemoryTransport(clock: clock)
        transport.route("/token") { _ in throw CancellationError() }
        let fetcher = TokenFetcher(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
            refresh: RefreshPolicy(), retry: .none, emit: { _ in })
        let result = await fetcher.fetch(.vehicle("v-42"))
        guard case .failure(let error) = result else {
            Issue.record("a failing transport produced a token")
            return
        }
        #expect(error.reason == .transportFailure)
    }

    @Test func cancellingTheFetchingTaskEndsItAsSignedOut() async {
        transport.inject([.hang])
        let fetcher = fetcher(retry: .none)
        let fetch = Task { await fetcher.fetch(.vehicle("v-42")) }
        await clock.waitForSleepers(count: 2)  // the hanging transport and the timeout
        fetch.cancel()
        guard case .failure(let error) = await fetch.value else {
            Issue.record("a cancelled fetch succeeded")
            return
        }
        #expect(error.reason == .signedOut)
    }

    @Test func anAnswerSlowerThanTheTimeoutTimesOutOnTheInjectedClock() async {
        transport.inject([.hang])
        let fetcher = fetcher(retry: .none, timeout: 5)
        let fetch = Task { await fetcher.fetch(.vehicle("v-42")) }
        await clock.waitForSleepers(count: 1, within: 5)
        clock.advance(by: 5)
        guard case .failure(let error) = await fetch.value else {
            Issue.record("a hanging fetch succeeded")
            return
        }
        #expect(error.reason == .timedOut)
        #expect(error.scope == .vehicle("v-42"))
    }

    // The retry deadline at its exact edge, for the checker's exchange and for one attempt.

    /// The checker's exchange retries only while the retry would start before the deadline:
    /// 0.5 s + 1 s of backoff against a 1.5 s deadline makes two requests, and the answer is
    /// the backend's last 503, not a timeout.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theCheckersExchangeMakesNoRetryExactlyAtTheDeadline() async throws {
        transport.setFaultInjector { _, _ in .status(503) }
        let fetcher = fetcher(
            retry: RetryPolicy(maximumAttempts: 10, initialBackoff: 0.5, multiplier: 2, jitter: 0, deadline: 1.5))
        let outcome = try await clock.runToCompletion { await fetcher.exchange(.vehicle("v-42")) }.get()
        guard case .failure(let error) = outcome else {
            Issue.record("a backend answering 503 gave \(outcome)")
            return
        }
        #expect(error.reason == .unexpectedStatus && error.status == 503, "\(error)")
        #expect(transport.requestCount == 2)
    }

    /// An attempt that starts with nothing left of its deadline sends no request: it fails
    /// as `timedOut` with no `fetchStarted`.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func anAttemptWithNothingLeftOfItsDeadlineSendsNothing() async throws {
        let fetcher = fetcher(retry: .none)
        let deadline = clock.uptime()
        let result = try await clock.runToCompletion {
            await fetcher.fetch(.vehicle("v-42"), deadline: { deadline }) { _, _, _ in false }
        }.get()
        guard case .failure(let error) = result else {
            Issue.record("an attempt past its deadline returned \(result)")
            return
        }
        #expect(error.reason == .timedOut)
        #expect(transport.requestCount == 0)
        #expect(events.count { $0.kind == .fetchStarted } == 0)
    }
}

@Suite("Manual clock: deadlines resolve in order", .timeLimit(.minutes(10)))
struct DeadlineOrderTests {
    /// A thousand fetches whose answer takes `latency` against a 15 s timeout, each with
    /// the clock moved past both at once; what they ended with, counted.
    func outcomes(latency: TimeInterval, advance: TimeInterval) async throws -> [String: Int] {
        var outcomes: [String: Int] = [:]
        for _ in 0..<1000 {
            let clock = ManualWallClock()
            let transport = InMemoryTransport(clock: clock, latency: latency)
            transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
            let engine = try TokenEngine(
                configuration: .init(
                    endpoint: TokenEndpoint(url: "https://backend.example.com/token", timeout: 15),
                    transport: transport,
                    clock: clock, retry: .none))
            let fetch = Task { try await engine.token(for: .vehicle("v-42")) }
            await clock.waitForSleepers(count: 2)  // the answer and the timeout
            clock.advance(by: advance)
            switch await fetch.result {
            case .success: outcomes["answer", default: 0] += 1
            case .failure(let error):
                outcomes[(error as? FleetAuthError)?.reason.description ?? "other", default: 0] += 1
            }
        }
        return outcomes
    }

    @Test func anAnswerDueBeforeItsTimeoutWinsAThousandTimesInARow() async throws {
        #expect(try await outcomes(latency: 0.5, advance: 20) == ["answer": 1000])
    }

    @Test func aTimeoutDueBeforeTheAnswerWinsAThousandTimesInARow() async throws {
        #expect(try await outcomes(latency: 30, advance: 40) == ["timedOut": 1000])
    }
}
