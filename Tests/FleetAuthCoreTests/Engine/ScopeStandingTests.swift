import Foundation
import Testing

@testable import FleetAuthCore

/// The one rule that derives a scope's token state from its cached token, its fetch in flight
/// and its gate, with the moment the clock alone changes it, read on the state alone.
@Suite("Scope standing: a scope's token state, and when the clock alone changes it", .timeLimit(.minutes(10)))
struct ScopeStandingTests {
    let scope = AuthorizationScope.vehicle("v-42")
    static let start: TimeInterval = 1_800_000_000
    let retry = RetryPolicy()

    var outage: FleetAuthError {
        FleetAuthError(reason: .unexpectedStatus, message: "The token backend answered 503.", status: 503)
    }
    var refusal: FleetAuthError {
        FleetAuthError(reason: .unexpectedStatus, message: "The token backend answered 401.", status: 401)
    }

    /// A state holding an hour's token minted at ``start`` for the scope.
    func stateHoldingAToken() -> TokenEngineState {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 4)
        let minted = Date(timeIntervalSince1970: Self.start)
        let token = AuthToken(
            value: "token-v-42", scope: scope, receivedAt: minted, expiresAt: minted.addingTimeInterval(3600),
            lifetime: 3600)
        _ = state.cache.store(TokenCache.Entry(token: token, policy: RefreshPolicy()))
        return state
    }

    var entry: TokenCache.Entry { stateHoldingAToken().cache.peek(scope)! }

    /// Checks that the standing at `now` holds up to within the rule's millisecond of its
    /// moment and has changed at it, then returns the standing at the moment.
    func expectChangesAtItsMoment(
        _ state: TokenEngineState, at now: TimeInterval, sourceLocation: SourceLocation = #_sourceLocation
    ) -> TokenEngineState.Standing? {
        let standing = state.standing(of: scope, at: now)
        guard let until = standing.until else {
            Issue.record("no moment for \(standing.state)", sourceLocation: sourceLocation)
            return nil
        }
        let before = state.standing(of: scope, at: until - 0.0011).state
        let after = state.standing(of: scope, at: until)
        #expect(
            before.phase == standing.state.phase && before.tokenFingerprint == standing.state.tokenFingerprint,
            sourceLocation: sourceLocation)
        #expect(
            after.state.phase != standing.state.phase
                || after.state.tokenFingerprint != standing.state.tokenFingerprint,
            sourceLocation: sourceLocation)
        return after
    }

    @Test func withNothingHeldAScopeHasNoTokenOrIsSignedOutAndTheClockChangesNothing() {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 4)
        #expect(state.standing(of: scope, at: Self.start).state.phase == .noToken)
        #expect(state.standing(of: scope, at: Self.start).until == nil)
        state.signedOut = true
        #expect(state.standing(of: scope, at: Self.start).state.phase == .signedOut)
    }

    @Test func aTokenIsFreshUntilItsEndOfUseThenTheScopeHasNone() {
        let state = stateHoldingAToken()
        let standing = state.standing(of: scope, at: Self.start)
        #expect(standing.state.phase == .fresh && standing.state.tokenFingerprint != nil)
        #expect(standing.until == entry.endOfUse)
        #expect(expectChangesAtItsMoment(state, at: Self.start)?.state.phase == .noToken)
    }

    @Test func aFetchInFlightShowsRefreshingWithTheTokenWhileItIsInUse() {
        var state = stateHoldingAToken()
        state.flights[scope] = Flight(id: 1, startedAt: Self.start)
        let standing = state.standing(of: scope, at: Self.start)
        #expect(standing.state.phase == .refreshing && standing.state.tokenFingerprint != nil)
        let after = expectChangesAtItsMoment(state, at: Self.start)
        #expect(after?.state.phase == .refreshing && after?.state.tokenFingerprint == nil && after?.until == nil)
    }

    @Test func throughAnOutageATokenIsDegradedDownToItsFloorThenFailed() {
        var state = stateHoldingAToken()
        var gate = FetchGate()
        let failedAt = entry.endOfUse + 1
        gate.attemptFailed(outage, attempt: 1, flightStartedAt: failedAt)
        state.gates[scope] = gate
        let standing = state.standing(of: scope, at: failedAt)
        #expect(standing.state.phase == .degraded && standing.state.error?.status == 503)
        #expect(standing.until == entry.floorAt)
        let after = expectChangesAtItsMoment(state, at: failedAt)
        #expect(after?.state.phase == .failed && after?.state.tokenFingerprint == nil)
    }

    @Test func afterARefusalATokenInUseShowsTheNextAttemptUntilItsEndOfUse() {
        var state = stateHoldingAToken()
        var gate = FetchGate()
        let wallNow = Date(timeIntervalSince1970: Self.start + 3000)
        gate.fetchFailed(
            refusal, startedAt: Self.start + 3000, at: Self.start + 3000, wallNow: wallNow, retry: retry,
            randomUnit: 0.5)
        state.gates[scope] = gate
        let standing = state.standing(of: scope, at: Self.start + 3000)
        #expect(standing.state.phase == .refreshRefused && standing.state.error?.status == 401)
        #expect(standing.state.nextAttemptAt == wallNow.addingTimeInterval(retry.failureCooldown))
        #expect(standing.until == entry.endOfUse)
        #expect(expectChangesAtItsMoment(state, at: Self.start + 3000)?.state.phase == .failed)
        // While a fetch runs, there is no next attempt to show.
        state.flights[scope] = Flight(id: 1, startedAt: Self.start + 3000)
        #expect(state.standing(of: scope, at: Self.start + 3000).state.nextAttemptAt == nil)
    }

    @Test func tokensRejectedInARowShowAsFailedWithTheRejection() {
        var state = TokenEngineState(capacity: 10, concurrentFetchLimit: 4)
        var gate = FetchGate()
        let wallNow = Date(timeIntervalSince1970: Self.start)
        for _ in 0..<2 {
            gate.tokenRejected(
                age: 10, scope: scope, at: Self.start, wallNow: wallNow, retry: retry, randomUnit: 0.5)
        }
        state.gates[scope] = gate
        let standing = state.standing(of: scope, at: Self.start)
        #expect(standing.state.phase == .failed && standing.state.error?.reason == .tokenMismatch)
        #expect(standing.state.nextAttemptAt != nil && standing.until == nil)
    }
}
