public import Foundation

/// How failed fetches are retried.
///
/// Transient failures (``FleetAuthError/isTransient``) are retried with exponential
/// backoff and jitter, at most `maximumAttempts` times in all and never past
/// `deadline`; a `Retry-After` from the backend lengthens the wait. Other failures are
/// returned at once. After a failed fetch the scope cools down for `failureCooldown`:
/// callers that need the network get the same error without a new request. When the
/// backend refuses for good (a 401 or 403 to the app's credential, or another answer no retry
/// fixes) fetch after fetch, each cooldown is twice the one before, up to 5 minutes (±10 %
/// with the default `jitter`), until a fetch succeeds, `refresh(for:)` or `invalidateAll()`.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts per fetch, the first included. Default 4.
    public var maximumAttempts: Int
    /// The wait before the second attempt. Default 0.5 s.
    public var initialBackoff: TimeInterval
    /// The factor between successive waits. Default 2.
    public var multiplier: Double
    /// The longest wait between attempts. Default 8 s.
    public var maximumBackoff: TimeInterval
    /// The random spread around each wait, as a fraction (0.2, the default, means ±20 %); 0
    /// makes the waits exact, for tests that assert them.
    public var jitter: Double
    /// The most time one fetch may take, all attempts and waits included. Default 30 s.
    public var deadline: TimeInterval
    /// How long a scope keeps failing fast after a failed fetch. Default 5 s. After refusals
    /// in a row it doubles each time, capped at 5 minutes (or at this cooldown if longer),
    /// moved by up to half of ``jitter`` either way; 0 turns both off.
    public var failureCooldown: TimeInterval

    /// Creates a policy; each argument sets the property of the same name.
    /// Nothing is checked here: a provider checks the policy when it is made.
    /// - Parameters:
    ///   - maximumAttempts: See ``maximumAttempts``.
    ///   - initialBackoff: The wait before the second attempt. Default 0.5 s.
    ///   - multiplier: The factor between successive waits. Default 2.
    ///   - maximumBackoff: The longest wait between attempts. Default 8 s.
    ///   - jitter: The random spread around each wait, as a fraction (0.2 means ±20 %); 0
    ///     makes the waits exact, for tests that assert them.
    ///   - deadline: See ``deadline``.
    ///   - failureCooldown: See ``failureCooldown``.
    public init(
        maximumAttempts: Int = 4, initialBackoff: TimeInterval = 0.5, multiplier: Double = 2,
        maximumBackoff: TimeInterval = 8, jitter: Double = 0.2, deadline: TimeInterval = 30,
        failureCooldown: TimeInterval = 5
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.multiplier = multiplier
        self.maximumBackoff = maximumBackoff
        self.jitter = jitter
        self.deadline = deadline
        self.failureCooldown = failureCooldown
    }

    /// The wait after failed attempt number `attempt` (1-based), before jitter is applied
    /// by `randomUnit` in `0...1` (0.5 means none).
    package func backoff(afterAttempt attempt: Int, randomUnit: Double) -> TimeInterval {
        let exponent = Double(max(0, attempt - 1))
        let base = min(maximumBackoff, initialBackoff * pow(multiplier, exponent))
        let spread = base * jitter * (2 * min(max(randomUnit, 0), 1) - 1)
        return max(0, base + spread)
    }

    /// Throws `invalidConfiguration` when the numbers cannot work.
    package func validate() throws(FleetAuthError) {
        let values = [initialBackoff, multiplier, maximumBackoff, jitter, deadline, failureCooldown]
        guard maximumAttempts >= 1, values.allSatisfy({ $0.isFinite && $0 >= 0 }), jitter <= 1, deadline > 0 else {
            throw FleetAuthError(
                reason: .invalidConfiguration,
                message:
                    "The retry policy needs maximumAttempts ≥ 1, a positive deadline, jitter in 0…1 and finite, non-negative times."
            )
        }
    }
}
