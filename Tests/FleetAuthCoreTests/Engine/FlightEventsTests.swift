import Foundation
import Testing

@testable import FleetAuthCore

/// A scope's fetch as events on the engine's state, read alone: each event's transition and
/// the action it returns, with callers parked on continuations the test answers as the
/// engine would.
@Suite("Flight events: callers, attempts and the end of a fetch, on the state alone", .timeLimit(.minutes(10)))
struct FlightEventsTests {
    let scope = AuthorizationScope.vehicle("v-42")
    static let start: TimeInterval = 1_800_000_000
    let retry = RetryPolicy()

    var outage: FleetAuthError {
        FleetAuthError(reason: .unexpectedStatus, message: "The token backend answered 503.", status: 503)
    }

    /// A caller waiting on a continuation handed to the state, and the task that gets its answer.
    struct ParkedCaller {
        let waiter: Flight.Waiter
        let answer: Task<AuthToken, any Error>
    }

    /// Parks a caller; the test must answer it (its task waits until then).
    static func park() async throws -> ParkedCaller {
        let (handed, hand) = AsyncStream.makeStream(of: Flight.Waiter.self)
        let answer = Task { try await withCheckedThrowingContinuation { hand.yield($0) } }
        for await waiter in handed { return ParkedCaller(waiter: waiter, answer: answer) }
        throw CancellationError()
    }

    func token(receivedAt uptime: TimeInterval, lifetime: TimeInterval = 3600) -> AuthToken {
        let minted = Date(timeIntervalSince1970: uptime)
        return AuthToken(
            value: "token-\(uptime)", scope: scope, receivedAt: minted, expiresAt: minted.addingTimeInterval(lifetime),
            lifetime: lifetime)
    }

    func inputs(at now: TimeInterval) -> TokenEngineState.FlightEndInputs {
        TokenEngineState.FlightEndInputs(
            refresh: RefreshPolicy(), retry: retry, wallNow: Date(timeIntervalSince1970: now), allowanceUnit: 0.5,
            spreadUnit: 0.5, waitUnit: 0.5)
    }

    /// Registers `caller` as a plain lookup (or a forced refresh) at `now`.
    func register(
        _ caller: ParkedCaller, id: UInt64, in state: inout TokenEngineState, forced: Bool = false,
        at now: TimeInterval
    ) -> TokenEngineState.Registration {
        state.register(caller.waiter, as: id, for: scope, forced: forced, cancelled: false, at: now)
    }

    @Test func theFirstCallerStartsAFlightLaterOnesJoinItAndItsEndAnswersThemAlike() async throws {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 4)
        let (first, second) = (try await Self.park(), try await Self.park())
        guard case .started(let flightID) = register(first, id: 1, in: &state, at: Self.start) else {
            Issue.record("the first caller did not start a flight")
            return
        }
        guard case .joined(queued: false) = register(second, id: 2, in: &state, at: Self.start) else {
            Issue.record("the second caller did not join the flight")
            return
        }
        #expect(state.standing(of: scope, at: Self.start).state.phase == .refreshing)
        #expect(state.flights[scope]?.budget == .counting(since: Self.start))
        let fetched = token(receivedAt: Self.start + 1)
        let after = state.flightEnded(
            flight: flightID, for: scope, with: .success(fetched), startedAt: Self.start, at: Self.start + 1,
            inputs(at: Self.start + 1))
        #expect(after.waiters.count == 2 && state.flights[scope] == nil)
        #expect(state.cache.peek(scope)?.token == fetched)
        #expect(state.standing(of: scope, at: Self.start + 1).state.phase == .fresh)
        for waiter in after.waiters { waiter.resume(with: after.answer.mapError { $0 as any Error }) }
        #expect(try await first.answer.value == fetched)
        #expect(try await second.answer.value == fetched)
    }

    @Test func callersWaitThroughAFailedAttemptWithinTheirBudgetAndGetTheErrorOnceItIsSpent() async throws {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 4)
        let caller = try await Self.park()
        guard case .started(let flightID) = register(caller, id: 1, in: &state, at: Self.start) else {
            Issue.record("no flight started")
            return
        }
        #expect(state.begin(flight: flightID, for: scope, at: Self.start) == 1)
        #expect(state.callersDeadline(of: flightID, for: scope, retry: retry) == Self.start + retry.deadline)
        let within = state.attemptFailed(
            flight: flightID, for: scope, error: outage, attempt: 1, retryAt: Self.start + 1, at: Self.start + 0.5,
            retry: retry)
        #expect(within.retries && within.failed.isEmpty && within.degraded == nil)
        let refreshing = state.standing(of: scope, at: Self.start + 0.5).state
        #expect(refreshing.phase == .refreshing && refreshing.error?.status == 503)

        let spent = state.attemptFailed(
            flight: flightID, for: scope, error: outage, attempt: retry.maximumAttempts, retryAt: Self.start + 9,
            at: Self.start + 8, retry: retry)
        #expect(spent.failed.count == 1 && !spent.retries)
        #expect(spent.failure.message.contains("This caller waited 8 s over 2 attempts"))
        #expect(state.flights[scope]?.budget == .spent)
        #expect(state.standing(of: scope, at: Self.start + 8).state.phase == .failed)
        for waiter in spent.failed { waiter.resume(with: .failure(spent.failure)) }
        await #expect(throws: FleetAuthError.self) { try await caller.answer.value }

        // Until the flight ends (at once in the engine, which sees `retries` false; later when
        // a usable token keeps it retrying), a lookup is told its failure; a forced refresh
        // claims a budget of its own.
        let (lookup, forced) = (try await Self.park(), try await Self.park())
        guard case .replayed(let held) = register(lookup, id: 2, in: &state, at: Self.start + 10) else {
            Issue.record("a lookup waited for a flight whose callers' budget was spent")
            return
        }
        #expect(held.status == 503)
        lookup.waiter.resume(throwing: held)
        guard case .joined = register(forced, id: 3, in: &state, forced: true, at: Self.start + 10) else {
            Issue.record("a forced refresh did not join the flight")
            return
        }
        #expect(state.callersDeadline(of: flightID, for: scope, retry: retry) == Self.start + 10 + retry.deadline)
        let ended = state.flightEnded(
            flight: flightID, for: scope, with: .failure(outage), startedAt: Self.start, at: Self.start + 11,
            inputs(at: Self.start + 11))
        #expect(ended.waiters.count == 1 && state.gates[scope]?.allowsRequest(at: Self.start + 11) == false)
        for waiter in ended.waiters { waiter.resume(with: ended.answer.mapError { $0 as any Error }) }
        await #expect(throws: FleetAuthError.self) { try await forced.answer.value }
    }

    @Test func aFailedAttemptServesLookupsTheTokenDegradedButAForcedRefreshWaitsOn() async throws {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 4)
        let held = token(receivedAt: Self.start)
        _ = state.cache.store(TokenCache.Entry(token: held, policy: RefreshPolicy()))
        let entry = try #require(state.cache.peek(scope))
        // Past its minimum remaining life, above its floor: no lookup is served it before a
        // failure says the backend is down.
        let now = entry.endOfUse + 1
        #expect(now < entry.floorAt)
        let (lookup, forced) = (try await Self.park(), try await Self.park())
        guard case .started(let flightID) = register(lookup, id: 1, in: &state, at: now) else {
            Issue.record("no flight started")
            return
        }
        _ = register(forced, id: 2, in: &state, forced: true, at: now)
        let after = state.attemptFailed(
            flight: flightID, for: scope, error: outage, attempt: 1, retryAt: now + 1, at: now, retry: retry)
        #expect(after.degraded?.token == held && after.degraded?.waiters.count == 1)
        #expect(after.failed.isEmpty && after.retries && state.flights[scope]?.waiters.count == 1)
        for waiter in after.degraded?.waiters ?? [] { waiter.resume(returning: held) }
        #expect(try await lookup.answer.value == held)
        let ended = state.flightEnded(
            flight: flightID, for: scope, with: .failure(outage), startedAt: now, at: now + 2, inputs(at: now + 2))
        for waiter in ended.waiters { waiter.resume(with: ended.answer.mapError { $0 as any Error }) }
        await #expect(throws: FleetAuthError.self) { try await forced.answer.value }
    }

    @Test func aQueuedFlightsCallersCountTheirWaitFromTheirArrivalNotFromItsStart() async throws {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 1)
        let other = AuthorizationScope.vehicle("v-7")
        let (first, queued) = (try await Self.park(), try await Self.park())
        guard
            case .started(let firstID) = state.register(
                first.waiter, as: 1, for: other, forced: false, cancelled: false, at: Self.start),
            case .started(let queuedID) = register(queued, id: 2, in: &state, at: Self.start)
        else {
            Issue.record("no flights started")
            return
        }
        let firstAdmitted = state.admit(flight: firstID, for: other)
        let queuedAdmitted = state.admit(flight: queuedID, for: scope)
        #expect(firstAdmitted && !queuedAdmitted)
        #expect(state.flights[scope]?.stage == .queued)
        // The first flight's task begins late: its callers' budget counts from then.
        _ = state.begin(flight: firstID, for: other, at: Self.start + 5)
        #expect(state.callersDeadline(of: firstID, for: other, retry: retry) == Self.start + 5 + retry.deadline)
        let ended = state.flightEnded(
            flight: firstID, for: other, with: .success(token(receivedAt: Self.start + 6)), startedAt: Self.start + 5,
            at: Self.start + 6, inputs(at: Self.start + 6))
        #expect(ended.nextInQueue?.flightID == queuedID)
        #expect(state.flights[scope]?.stage == .running(afterQueue: true))
        _ = state.begin(flight: queuedID, for: scope, at: Self.start + 6)
        #expect(state.callersDeadline(of: queuedID, for: scope, retry: retry) == Self.start + retry.deadline)
        for waiter in ended.waiters { waiter.resume(with: ended.answer.mapError { $0 as any Error }) }
        _ = try await first.answer.value
        queued.waiter.resume(throwing: CancellationError())
        await #expect(throws: CancellationError.self) { try await queued.answer.value }
    }

    @Test func aCallerCancelledBeforeItWaitsStartsNothing() async throws {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 4)
        let caller = try await Self.park()
        guard
            case .cancelled = state.register(
                caller.waiter, as: 1, for: scope, forced: false, cancelled: true, at: Self.start)
        else {
            Issue.record("a cancelled caller was registered")
            return
        }
        #expect(state.flights[scope] == nil && state.fetches == 0)
        caller.waiter.resume(throwing: CancellationError())
        await #expect(throws: CancellationError.self) { try await caller.answer.value }
    }
}
