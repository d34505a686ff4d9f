public import Foundation

/// Where a context's token stands, as a screen shows it: fresh, being refreshed, handed
/// out while the backend fails, failed, or gone.
///
/// ``TokenProvider/tokenStates(for:)`` delivers one each time the state changes. It names
/// the token by its fingerprint and never holds its value.
public struct TokenState: Sendable, Equatable, CustomStringConvertible {
    /// How the token stands. New phases may be added without breaking anyone.
    public struct Phase: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case noToken, fresh, refreshing, degraded, refreshRefused, failed, signedOut
        }
        private let value: Value

        /// No token is held: none was fetched yet, or it was dropped (rejected by the fleet
        /// service, evicted, or past use); the next call fetches one.
        public static let noToken = Phase(value: .noToken)
        /// A token is held and handed out; ``TokenState/expiresAt`` says until when.
        public static let fresh = Phase(value: .fresh)
        /// A fetch is under way: the first one, a refresh while the held token is still
        /// handed out, or a fetch with no token yet whose attempt failed while retries remain
        /// (``TokenState/error`` then says what the last attempt met).
        public static let refreshing = Phase(value: .refreshing)
        /// The token backend is unreachable or failing for a reason that may pass (a
        /// transient ``TokenState/error``), and the held token is still handed out past its
        /// refresh window, until its outage floor. Show "connection problems".
        public static let degraded = Phase(value: .degraded)
        /// The backend refused the refresh for good (a 401 or 403: ``TokenState/error``, not
        /// transient) while the held token is still handed out, until it has only the minimum
        /// remaining lifetime left. Show "sign in again soon": the app's credential needs
        /// renewing before then.
        public static let refreshRefused = Phase(value: .refreshRefused)
        /// No usable token and the last fetch failed with its retries used up
        /// (``TokenState/error``): calls that need a token fail until a fetch succeeds. While
        /// the same failure repeats (a refused credential asked again and again) the state
        /// stays `failed`, delivered once, and ``TokenState/nextAttemptAt`` says when the next
        /// request may go.
        public static let failed = Phase(value: .failed)
        /// Every token was dropped by `invalidateAll()` (sign-out). Every context stands so,
        /// held before or not, in `tokenState(for:)` and in streams opened later, until the app
        /// next asks for a token (`token(for:)`, `fetchToken(with:)`, `refresh(for:)`,
        /// `prefetch(_:)`); a look at the cache alone (`cachedUsableToken(for:)`) does not end
        /// it. Show the sign-in screen.
        public static let signedOut = Phase(value: .signedOut)

        /// `noToken`, `fresh`, `refreshing`, `degraded`, `refreshRefused`, `failed` or `signedOut`.
        public var description: String { value.rawValue }
    }

    /// The vehicle or trip.
    public let scope: AuthorizationScope
    /// How the token stands.
    public let phase: Phase
    /// The held token's expiry (the device's clock), if a token is held.
    public let expiresAt: Date?
    /// The held token's fingerprint, if a token is held.
    public let tokenFingerprint: String?
    /// Why the backend failed, when ``phase`` is `degraded`, `refreshRefused` or `failed`, or
    /// `refreshing` after a failed attempt.
    public var error: FleetAuthError? { failure?.error }
    /// When the next request for a token may go (the device's clock), while a failed or
    /// refused fetch holds the context back and none runs: until then a call that needs a new
    /// token gets ``error`` without a request (``TokenProvider/refresh(for:)`` asks at once);
    /// `nil` when a request may go now or one is under way. A screen shows "trying again at …"
    /// from it. Set on `failed` and `refreshRefused` states.
    public let nextAttemptAt: Date?
    /// The error, compared by what it says (its cause, status and message), so that states
    /// compare equal when they say the same.
    private let failure: Failure?

    private struct Failure: Equatable, Sendable {
        let error: FleetAuthError

        static func == (lhs: Failure, rhs: Failure) -> Bool {
            lhs.error.reason == rhs.error.reason && lhs.error.status == rhs.error.status
                && lhs.error.message == rhs.error.message
        }
    }

    /// Creates the state of `scope` holding `token` (if any): what an app's view-model test
    /// builds to show each state without a provider. The state keeps the token's fingerprint
    /// and expiry, never its value; its ``nextAttemptAt`` is `nil` (the 1.0.0 initializer: the
    /// one below, with `nextAttemptAt:`, is the same with a next attempt).
    ///
    /// <!-- snippet setup:
    /// import FleetAuthDriver
    /// import Foundation
    /// let scope = DriverAuthorizationContext(vehicleID: "v-42").scope
    /// let token = AuthToken(value: "header.payload.signature", scope: scope, expiresAt: Date().addingTimeInterval(3600))
    /// -->
    /// ```swift
    /// let outage = FleetAuthError(code: .unexpectedStatus, message: "The token backend answered 503.", status: 503)
    /// let degraded = TokenState(scope: scope, phase: .degraded, token: token, error: outage)
    /// ```
    /// - Parameters:
    ///   - scope: The vehicle or trip.
    ///   - phase: How the token stands.
    ///   - token: The held token, if any; sets ``expiresAt`` and ``tokenFingerprint``.
    ///   - error: Why the backend failed, for a `degraded`, `refreshRefused` or `failed` phase,
    ///     or a `refreshing` one after a failed attempt.
    public init(scope: AuthorizationScope, phase: Phase, token: AuthToken? = nil, error: FleetAuthError? = nil) {
        self.init(scope: scope, phase: phase, token: token, error: error, nextAttemptAt: nil)
    }

    /// Creates the state of `scope` holding `token` (if any) that says when the next request
    /// for a token may go: a `failed` or `refreshRefused` state as a provider reports it while
    /// the backend refuses, for an app's view-model test.
    /// - Parameters:
    ///   - scope: The vehicle or trip.
    ///   - phase: How the token stands.
    ///   - token: The held token, if any; sets ``expiresAt`` and ``tokenFingerprint``.
    ///   - error: Why the backend failed.
    ///   - nextAttemptAt: When the next request may go; sets ``nextAttemptAt``.
    public init(
        scope: AuthorizationScope, phase: Phase, token: AuthToken? = nil, error: FleetAuthError? = nil,
        nextAttemptAt: Date?
    ) {
        self.scope = scope
        self.phase = phase
        self.expiresAt = token?.expiresAt
        self.tokenFingerprint = token?.fingerprint
        self.failure = error.map(Failure.init)
        self.nextAttemptAt = nextAttemptAt
    }

    /// Whether `other`, coming after this, says nothing new (the same phase, token, and
    /// error code and status, and no new ``nextAttemptAt``): a repeat is not delivered. A
    /// moved `nextAttemptAt` is news, the screen's "trying again at …", so a stream hears it
    /// once per request sent; one that is gone while a request runs is not.
    package func says(_ other: TokenState) -> Bool {
        phase == other.phase && tokenFingerprint == other.tokenFingerprint && error?.reason == other.error?.reason
            && error?.status == other.error?.status
            && (other.nextAttemptAt == nil || other.nextAttemptAt == nextAttemptAt)
    }

    /// `vehicle v-42 degraded tok_1a2b3c4d until 2026-11-23T18:00:00Z: unexpectedStatus HTTP 503`:
    /// the scope, the phase, the token's fingerprint and expiry, and the error's ``FleetAuthError/code``
    /// (with its finer cause where it has one, as in `tokenMismatch/scopeMismatch`).
    public var description: String {
        var text = "\(scope) \(phase)"
        if let tokenFingerprint { text += " \(tokenFingerprint)" }
        if let expiresAt, expiresAt != .distantFuture { text += " until \(HTTPDate.iso8601(expiresAt))" }
        if let error { text += ": \(error.summary)" + (error.status.map { " HTTP \($0)" } ?? "") }
        if let nextAttemptAt { text += ", next attempt at \(HTTPDate.iso8601(nextAttemptAt))" }
        return text
    }
}
