package import FleetAuthCore

extension RetryPolicy {
    /// One attempt, no cooldown: for tests that look at a single request.
    package static let none = RetryPolicy(maximumAttempts: 1, failureCooldown: 0)
}
