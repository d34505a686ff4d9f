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

    /// Each refusal names the one setting that is wrong, with its bound, and no other.
    @Test(arguments: [
        (RetryPolicy(maximumAttempts: 0), "`maximumAttempts` must be 1 or more"),
        (RetryPolicy(jitter: 2), "`jitter` must be at most 1"),
        (RetryPolicy(deadline: 0), "`deadline` must be more than 0 s"),
        (RetryPolicy(initialBackoff: .infinity), "`initialBackoff` must be a finite number, 0 or more"),
        (RetryPolicy(failureCooldown: -5), "`failureCooldown` must be a finite number, 0 or more (it is -5.0)"),
    ])
    func unusableRetryPoliciesAreRejectedNamingTheSetting(policy: RetryPolicy, named: String) {
        let error = #expect(throws: FleetAuthError.self) { try policy.validate() }
        let message = error?.message ?? ""
        #expect(message.contains(named), "\(message)")
        let settings = ["maximumAttempts", "initialBackoff", "jitter", "deadline", "failureCooldown"]
        #expect(settings.filter { message.contains("`\($0)`") }.count == 1, "\(message)")
    }
}
