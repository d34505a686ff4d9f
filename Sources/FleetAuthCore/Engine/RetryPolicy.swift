public import Foundation

/// How failed fetches are retried.
///
/// Transient failures (``FleetAuthError/isTransient``) are retried with exponential
/// backoff and jitter, at most `maximumAttempts` times in all and never past
/// `deadline`; a `Retry-After` from the backend lengthens the wait. Other failures are
/// returned at once. After a failed fetch the scope cools down for `failureCooldown`:
/// callers that need the network get the same error without a new request. Fetch after
/// failed fetch, each cooldown is twice the one before (±10 % with the default `jitter`): up
/// to a minute through an outage, where fetches after the first make one attempt unless a
/// usable token is held, and up to 5 minutes when the backend refuses for good (a 401 or 403
/// to the app's credential, or another answer no retry fixes), until a fetch succeeds,
/// `refresh(for:)` or `invalidateAll()`.
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
    /// How long a scope keeps failing fast after a failed fetch. Default 5 s. After failed
    /// fetches in a row it doubles each time, capped at a minute through an outage and at 5
    /// minutes after refusals (or at this cooldown if longer), moved by up to half of
    /// ``jitter`` either way; 0 turns all of it off.
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

    /// The wait after failed attempt number `attempt` (1-based), moved by `randomUnit` in
    /// `0...1` up to ``jitter`` either way (0.5 means not at all).
    package func backoff(afterAttempt attempt: Int, randomUnit: Double) -> TimeInterval {
        Self.exponentialWait(
            first: initialBackoff, multiplier: multiplier, cap: maximumBackoff, step: attempt, jitter: jitter,
            randomUnit: randomUnit)
    }

    /// The one backoff formula, for the attempts of a fetch and for the waits between
    /// fetches (``FetchGate``): `first` multiplied by `multiplier` `step − 1` times, at most
    /// `cap`, then moved by `randomUnit` (in `0...1`) up to `jitter` of itself either way.
    package static func exponentialWait(
        first: TimeInterval, multiplier: Double, cap: TimeInterval, step: Int, jitter: Double, randomUnit: Double
    ) -> TimeInterval {
        let exponent = Double(min(max(0, step - 1), 62))
        let base = min(cap, first * pow(multiplier, exponent))
        let spread = base * jitter * (2 * min(max(randomUnit, 0), 1) - 1)
        return max(0, base + spread)
    }

    /// Throws `invalidConfiguration` naming the first setting that cannot work and its bound.
    package func validate() throws(FleetAuthError) {
        func refuse(_ message: String) -> FleetAuthError { .invalidSetting(of: "RetryPolicy", message) }
        guard maximumAttempts >= 1 else {
            throw refuse("`maximumAttempts` must be 1 or more (it is \(maximumAttempts)): 1 is a single attempt.")
        }
        let values: KeyValuePairs<String, TimeInterval> = [
            "initialBackoff": initialBackoff, "multiplier": multiplier, "maximumBackoff": maximumBackoff,
            "jitter": jitter, "deadline": deadline, "failureCooldown": failureCooldown,
        ]
        try FleetAuthError.requireFiniteAndNotNegative(values, of: "RetryPolicy")
        guard jitter <= 1 else {
            throw refuse("`jitter` must be at most 1, a spread of ±100 % (it is \(jitter)); 0.2 is the default.")
        }
        guard deadline > 0 else {
            throw refuse("`deadline` must be more than 0 s: it bounds all of a fetch's attempts (30 s is the default).")
        }
    }
}
