import FleetAuthCore
import Foundation
import Testing

@Suite("Refresh and retry policies", .timeLimit(.minutes(10)))
struct RefreshPolicyTests {
    let policy = RefreshPolicy()

    @Test(arguments: [
        (3600.0, 300.0, 600.0),  // the contract's margins for an hour-long token
        (1800.0, 300.0, 600.0),
        (600.0, 150.0, 300.0),
        (120.0, 30.0, 60.0),  // a 2-minute token stays usable for 90 s
        (40.0, 10.0, 20.0),
    ])
    func marginsScaleWithLifetime(lifetime: Double, minimum: Double, window: Double) {
        #expect(policy.minimumRemaining(forLifetime: lifetime) == minimum)
        #expect(policy.refreshWindow(forLifetime: lifetime) == window)
    }

    @Test(arguments: [
        RefreshPolicy(minimumRemainingLifetime: -1),
        RefreshPolicy(minimumRemainingLifetime: 700, refreshWindow: 600),
        RefreshPolicy(maximumLifetime: .nan),
        RefreshPolicy(maximumLifetime: 10, minimumLifetime: 20),
    ])
    func unusableRefreshPoliciesAreRejected(policy: RefreshPolicy) {
        #expect(throws: FleetAuthError.self) { try policy.validate() }
    }

    @Test func backoffGrowsAndIsCapped() {
        let retry = RetryPolicy(initialBackoff: 0.5, multiplier: 2, maximumBackoff: 4, jitter: 0)
        let waits = (1...6).map { retry.backoff(afterAttempt: $0, randomUnit: 0.9) }
        #expect(waits == [0.5, 1, 2, 4, 4, 4])
    }

    @Test func jitterStaysWithinItsSpread() {
        let retry = RetryPolicy(initialBackoff: 1, jitter: 0.2)
        #expect(retry.backoff(afterAttempt: 1, randomUnit: 0) == 0.8)
        #expect(retry.backoff(afterAttempt: 1, randomUnit: 1) == 1.2)
        #expect(retry.backoff(afterAttempt: 1, randomUnit: 0.5) == 1)
        for _ in 0..<100 {
            let wait = retry.backoff(afterAttempt: 3, randomUnit: .random(in: 0...1))
            #expect(wait >= 3.2 && wait <= 4.8)
        }
    }

    @Test(arguments: [
        RetryPolicy(maximumAttempts: 0), RetryPolicy(jitter: 2), RetryPolicy(deadline: 0),
        RetryPolicy(initialBackoff: .infinity),
    ])
    func unusableRetryPoliciesAreRejected(policy: RetryPolicy) {
        #expect(throws: FleetAuthError.self) { try policy.validate() }
    }
}
