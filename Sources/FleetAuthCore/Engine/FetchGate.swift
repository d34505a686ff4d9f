package import Foundation

/// When a scope may ask the token backend again: the one rule the lookup, the registration
/// of a waiting caller and the token state read.
///
/// It holds what the scope's fetches met since they last went well: the failed attempts (the
/// outage, whose backoff a later flight carries on), the consecutive refusals (a fetch that
/// failed for good: the backend refused the credential with a 401 or 403, or answered with
/// something no retry fixes), and the consecutive tokens the fleet service rejected within a
/// minute of their arrival. Until ``nextRequestAt`` callers without a usable token get the
/// held error without a request.
///
/// - A transient failure (an outage) holds the scope back for ``RetryPolicy/failureCooldown``
///   after the first failed fetch, then twice as long after each further one, up to
///   ``outageCap`` (never below the cooldown, never below the backend's `Retry-After`), each
///   wait drawn with up to half the retry policy's jitter either side. The first fetch of an
///   outage retries inside itself; later fetches make one attempt unless a usable token is
///   held, so a scope without a token asks about once a minute once the outage is long.
/// - A refusal holds it back for the cooldown the first time, then twice as long after each
///   further refusal, up to ``refusalCap`` (never below the cooldown), each wait drawn with
///   up to half the retry policy's jitter either side: a fleet refused together does not come
///   back together.
/// - A token the fleet service rejects is replaced at once the first time; a second rejected
///   within a minute of its arrival holds the scope back twice the cooldown, doubling up to
///   ``rejectionCap``: a backend minting tokens the service refuses is not asked for two tokens
///   a call for ever.
/// - A successful fetch, ``restart()`` (`refresh(for:)`) and `invalidateAll()` start it over;
///   so does a token that lived to its refresh (the rejection count).
package struct FetchGate: Sendable {
    /// The failed attempts since the scope's last success.
    package struct FailureRun: Sendable {
        /// When the first failed attempt began (uptime).
        package let since: TimeInterval
        /// The last attempt's error.
        package var error: FleetAuthError
        /// How many attempts have failed since it began: a later flight carries on from
        /// there, so a long outage is retried at the longest backoff, not from the first.
        package var attempts = 0

        /// ``error``, saying how long the backend has been failing once that is a second
        /// or more.
        package func failure(at now: TimeInterval) -> FleetAuthError {
            let duration = now - since
            guard duration >= 1 else { return error }
            return error.appending(
                "The token backend has been failing for \(SpokenDuration.describe(duration)): no token since the first failed attempt began."
            )
        }

        /// ``error`` for a caller that waited from `waitedSince` to `now` through `attempts`
        /// attempts: how long, and which settings bound that wait.
        package func failure(at now: TimeInterval, waitedSince: TimeInterval, attempts: Int, retry: RetryPolicy)
            -> FleetAuthError
        {
            let waited = now - waitedSince
            let older = now - since > waited + 1
            return (older ? failure(at: now) : error).appending(
                "This caller waited \(SpokenDuration.describe(waited)) over \(attempts) attempt\(attempts == 1 ? "" : "s"); `RetryPolicy(maximumAttempts:deadline:)` (\(retry.maximumAttempts), \(SpokenDuration.describe(retry.deadline))) bounds that wait."
            )
        }
    }

    /// The longest wait between two requests of a scope whose fetches keep being refused
    /// (before jitter), unless the failure cooldown is longer: 5 minutes.
    package static let refusalCap: TimeInterval = 300
    /// The longest wait before fetching again after tokens the fleet service rejected in a row
    /// (before jitter), unless the failure cooldown is longer: 5 minutes.
    package static let rejectionCap: TimeInterval = 300
    /// The longest wait between two fetches of a scope through an outage (before jitter),
    /// unless the failure cooldown is longer: 1 minute, so that the first token comes within
    /// about 75 s of the backend's return.
    package static let outageCap: TimeInterval = 60
    /// A token the fleet service rejects this soon after it arrived counts as one more of a
    /// run of rejections; an older one starts the count over.
    package static let youngTokenAge: TimeInterval = 60

    /// The failed attempts since the last success; `nil` when the last fetch succeeded.
    package private(set) var failures: FailureRun?
    /// Fetches that failed for good in a row.
    package private(set) var refusals = 0
    /// Fetches that failed for a transient reason in a row.
    package private(set) var outageFetches = 0
    /// Tokens the fleet service rejected in a row, each within ``youngTokenAge`` of arriving.
    package private(set) var rejections = 0
    /// What callers are told while rejected tokens hold the scope back.
    package private(set) var rejection: FleetAuthError?
    /// Callers without a usable token get the held error without a request until then (uptime).
    package private(set) var nextRequestAt: TimeInterval = 0
    /// The same moment on the device's clock, for the token state.
    package private(set) var nextRequestDate: Date?

    /// Whether it holds nothing: the engine drops it.
    package var isEmpty: Bool { failures == nil && refusals == 0 && rejections == 0 && outageFetches == 0 }

    /// Whether an earlier fetch already failed in this outage and the scope has been asked
    /// for since, at uptime `now`: a fetch then makes one attempt unless a usable token is
    /// held, and the gate spaces the next. A scope nobody asked for in longer than
    /// ``outageCap`` after its gate opened starts over with the retry policy's attempts.
    package func isInLongOutage(at now: TimeInterval) -> Bool {
        outageFetches > 0 && now - nextRequestAt <= Self.outageCap
    }

    /// Whether a request may go at uptime `now`.
    package func allowsRequest(at now: TimeInterval) -> Bool { now >= nextRequestAt }

    /// Creates a gate that holds nothing: a scope that may ask at once.
    package init() {}

    /// The error a caller without a usable token gets instead of a request at `now`, or `nil`
    /// when it may have one. `flightInBackground`: `nil` when no fetch runs for the scope, else
    /// whether that fetch's callers had their attempts and deadline (``Flight/Budget/spent``:
    /// it goes on without callers, if at all). A caller is held back while the scope cools down (an outage's cooldown, a
    /// refusal's or a rejection's backoff) and no fetch runs, and while a fetch whose callers'
    /// budget is spent still runs. A forced caller (`refresh(for:)`) does not ask.
    package func heldError(flightInBackground: Bool?, at now: TimeInterval) -> FleetAuthError? {
        if let flightInBackground {
            guard flightInBackground, let failures else { return nil }
            return failures.failure(at: now)
        }
        guard !allowsRequest(at: now) else { return nil }
        return heldError(at: now)
    }

    /// What the scope's callers are told while it is held back: after repeated refusals or
    /// rejections, with how long until the next request may go.
    package func heldError(at now: TimeInterval) -> FleetAuthError? {
        guard let error = failures.map({ $0.failure(at: now) }) ?? rejection else { return nil }
        let counted =
            refusals > 1
            ? "after \(refusals) refusals in a row"
            : rejections > 1 ? "after \(rejections) rejected tokens in a row" : nil
        guard let counted, now < nextRequestAt else { return error }
        return error.appending(
            "No request goes to the token backend for another \(SpokenDuration.describe(nextRequestAt - now)) \(counted); `refresh(for:)` asks at once."
        )
    }

    /// The number (not the moment) of the attempt the next flight starts from: an outage's
    /// backoff carries on.
    package var nextAttempt: Int { (failures?.attempts ?? 0) + 1 }

    /// Records a failed attempt (number `attempt`) of a flight that started at `started`.
    package mutating func attemptFailed(_ error: FleetAuthError, attempt: Int, flightStartedAt started: TimeInterval) {
        var failures = self.failures ?? FailureRun(since: started, error: error)
        failures.error = error
        failures.attempts = max(failures.attempts, attempt)
        self.failures = failures
    }

    /// Records a fetch that failed with `error` at `now` (`wallNow` on the device's clock):
    /// the scope is held back for the cooldown, or for a refusal's growing wait.
    package mutating func fetchFailed(
        _ error: FleetAuthError, startedAt started: TimeInterval, at now: TimeInterval, wallNow: Date,
        retry: RetryPolicy, randomUnit: Double
    ) {
        var failures = self.failures ?? FailureRun(since: started, error: error)
        failures.error = error
        self.failures = failures
        let wait: TimeInterval
        if Self.isRefusal(error) {
            refusals += 1
            wait = Self.wait(after: refusals, cap: Self.refusalCap, retry: retry, randomUnit: randomUnit)
        } else if error.isTransient {
            // A fetch that began long after the gate opened starts the count over.
            if !isInLongOutage(at: started) { outageFetches = 0 }
            outageFetches += 1
            // The backend's `Retry-After`, up to the cap: a wrong clock on its side must not
            // hold the scope for hours.
            wait = max(
                Self.wait(after: outageFetches, cap: Self.outageCap, retry: retry, randomUnit: randomUnit),
                min(error.retryAfter ?? 0, max(Self.outageCap, retry.failureCooldown)))
        } else {
            // Nothing reached the backend (the app's `headers` closure threw, a sign-out).
            wait = retry.failureCooldown
        }
        hold(until: now + wait, wallNow: wallNow + wait)
    }

    /// Records a successful fetch: the outage and the refusals are over. `replaced`: the
    /// fetch replaced a token that was still cached (it lived to its refresh), which ends a
    /// run of rejections too.
    package mutating func fetchSucceeded(replaced: Bool) {
        failures = nil
        refusals = 0
        outageFetches = 0
        if replaced {
            rejections = 0
            rejection = nil
        }
        if rejections < 2 { hold(until: 0, wallNow: nil) }
    }

    /// Records that the fleet service rejected the scope's cached token, `age` seconds after
    /// it arrived: the first of a run is replaced at once; later ones hold the scope back.
    package mutating func tokenRejected(
        age: TimeInterval, scope: AuthorizationScope, at now: TimeInterval, wallNow: Date, retry: RetryPolicy,
        randomUnit: Double
    ) {
        rejections = age <= Self.youngTokenAge ? rejections + 1 : 1
        guard rejections > 1 else {
            rejection = nil
            return
        }
        let wait = Self.wait(after: rejections, cap: Self.rejectionCap, retry: retry, randomUnit: randomUnit)
        rejection = FleetAuthError(
            reason: .tokenMismatch,
            message:
                "The fleet service rejected \(rejections) tokens in a row, each within a minute of its arrival: the backend mints tokens the service refuses (check the audience, the project and the claims it mints), so they are not fetched again for a while.",
            scope: scope)
        hold(until: now + wait, wallNow: wallNow + wait)
    }

    /// Starts over: `refresh(for:)` asks now, whatever came before.
    package mutating func restart() {
        refusals = 0
        outageFetches = 0
        rejections = 0
        rejection = nil
        hold(until: 0, wallNow: nil)
    }

    private mutating func hold(until uptime: TimeInterval, wallNow date: Date?) {
        nextRequestAt = uptime
        nextRequestDate = date
    }

    /// The wait after the `count`th failed fetch (refusal, rejection or outage) in a row: the
    /// cooldown doubled `count − 1` times, at most `cap` (or the cooldown, if longer), and
    /// moved by `randomUnit` (in `0...1`) up to half the retry policy's jitter either way (the
    /// first wait stays exactly the cooldown).
    package static func wait(after count: Int, cap: TimeInterval, retry: RetryPolicy, randomUnit: Double)
        -> TimeInterval
    {
        let cooldown = retry.failureCooldown
        guard count > 1 else { return cooldown }
        return RetryPolicy.exponentialWait(
            first: cooldown, multiplier: 2, cap: max(cap, cooldown), step: count, jitter: retry.jitter / 2,
            randomUnit: randomUnit)
    }

    /// Whether `error` is a refusal: the backend answered, and no retry will change its
    /// answer (a refused credential, a 404, a token the SDK refuses). Not a failure that may
    /// pass, and not one that sent no request (the app's `headers` closure threw, a sign-out).
    package static func isRefusal(_ error: FleetAuthError) -> Bool {
        guard !error.isTransient else { return false }
        switch error.reason {
        case .credentialsUnavailable, .signedOut, .missingContext, .invalidContext, .invalidConfiguration:
            return false
        case .insecureEndpoint:
            // Plain http is refused before anything is sent; a server the device does not
            // trust was tried (the transport's error is underneath), and answers so again.
            return error.underlyingError != nil
        default: return true
        }
    }
}
