import FleetAuthCore
import Foundation
import Testing

/// What an app's view-model test does: build the tokens and states it shows with the public
/// initializers alone, no provider, no clock, and print them without the token's value.
@Suite("Tokens and token states an app's test builds", .timeLimit(.minutes(10)))
struct AppTestDoubleTests {
    let scope = AuthorizationScope(kind: .vehicle, id: "v-42")
    let received = Date(timeIntervalSince1970: 1_800_000_000)
    /// Not a real JWT: a test double's value is any string, and it is never decoded.
    let secret = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhcHAtdGVzdCJ9.c2VjcmV0LXNpZ25hdHVyZQ"

    var token: AuthToken {
        AuthToken(value: secret, scope: scope, expiresAt: received.addingTimeInterval(3600), receivedAt: received)
    }

    /// Every rendering a log, a failure message or a debugger may show.
    func renderings(of subject: Any) -> [String] {
        var dumped = ""
        dump(subject, to: &dumped)
        return [String(describing: subject), String(reflecting: subject), dumped, "\(subject)"]
    }

    /// Whether `text` shows the secret or any of its three parts.
    func showsTheSecret(_ text: String) -> Bool {
        (secret.split(separator: ".").map(String.init) + [secret]).contains { text.contains($0) }
    }

    @Test func aTokenCarriesWhatTheTestGaveIt() {
        let token = token
        let sameValue = token.value == secret  // outside #expect: a failure prints no token
        #expect(sameValue)
        #expect(token.scope == scope)
        #expect(token.expiresAt == received.addingTimeInterval(3600))
        #expect(token.receivedAt == received)
        #expect(token.fingerprint == AuthToken.fingerprint(of: secret))
        #expect(token == self.token)
        #expect(token.description == "AuthToken(\(token.fingerprint), vehicle v-42, expires 2027-01-15T09:00:00Z)")
    }

    @Test func aTokensLifetimeIsItsExpiryLessItsReceipt() {
        #expect(token.lifetime == 3600)
        let later = AuthToken(value: secret, scope: scope, expiresAt: received.addingTimeInterval(600))
        #expect(abs(later.receivedAt.timeIntervalSinceNow) < 60)  // received now by default
        #expect(abs(later.lifetime - later.expiresAt.timeIntervalSince(later.receivedAt)) < 0.001)
    }

    @Test func aTokenNeverShowsItsValue() {
        for rendering in renderings(of: token) {
            #expect(rendering.contains(token.fingerprint))
            #expect(!showsTheSecret(rendering), "a rendering of the token shows its value")
        }
    }

    @Test func aStateNamesTheTokenByFingerprintAndShowsTheError() {
        let outage = FleetAuthError(code: .unexpectedStatus, message: "The token backend answered 503.", status: 503)
        let state = TokenState(scope: scope, phase: .degraded, token: token, error: outage)
        #expect(state.scope == scope)
        #expect(state.phase == .degraded)
        #expect(state.tokenFingerprint == token.fingerprint)
        #expect(state.expiresAt == token.expiresAt)
        #expect(state.error?.code == .unexpectedStatus)
        #expect(
            state.description
                == "vehicle v-42 degraded \(token.fingerprint) until 2027-01-15T09:00:00Z: unexpectedStatus HTTP 503")
        for rendering in renderings(of: state) {
            #expect(!showsTheSecret(rendering), "a rendering of the state shows the token's value")
        }
    }

    @Test func aStateWithoutATokenHoldsNone() {
        let state = TokenState(scope: scope, phase: .noToken)
        #expect(state.tokenFingerprint == nil && state.expiresAt == nil && state.error == nil)
        #expect(state.description == "vehicle v-42 noToken")
        #expect(state == TokenState(scope: scope, phase: .noToken, token: nil, error: nil))
        #expect(state != TokenState(scope: scope, phase: .fresh, token: token))
    }
}

/// A dashboard that reads a provider's statistics is tested with counts made by hand.
@Suite("Statistics an app's test builds", .timeLimit(.minutes(10)))
struct StatisticsTestDoubleTests {
    @Test func statisticsReadBackTheCountsTheyWereMadeWith() {
        let statistics = TokenStatistics(
            fetches: 3, hits: 120, waits: 2, degradedServes: 1, cachedScopes: 2, evictedUsable: 5, activeFetches: 1)
        #expect(statistics.fetches == 3 && statistics.hits == 120 && statistics.waits == 2)
        #expect(statistics.degradedServes == 1 && statistics.cachedScopes == 2)
        #expect(statistics.evictedUsable == 5 && statistics.activeFetches == 1)
        #expect(
            statistics.description
                == "fetches 3, hits 120, waits 2, degraded 1, cached 2, in flight 1, evicted while usable 5 (raise cacheCapacity)"
        )
        #expect(TokenStatistics() == TokenStatistics(fetches: 0))
    }
}
