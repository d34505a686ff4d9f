public import Foundation

/// The error type of token fetching: everything the engine and providers throw.
///
/// It carries a stable ``code`` to switch on, a ``message`` that says what went wrong and
/// what to fix, and the context a user needs to act: the ``scope`` (vehicle or trip),
/// the HTTP ``status`` where the backend answered, and the
/// ``underlyingError``. No property, description or message ever holds a token's value.
public struct FleetAuthError: Error, CustomStringConvertible {
    /// What an app does about an error, as a stable code to switch on. New codes may be
    /// added without breaking anyone; the ``message`` names the exact cause.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        package enum Value: String, Hashable, Sendable {
            case invalidContext, invalidConfiguration, credentialsUnavailable
            case transportFailure, timedOut, unexpectedStatus, malformedResponse, tokenMismatch
            case tokenExpired, signedOut
        }
        package let value: Value

        /// The caller passed no context, or one whose IDs are empty or malformed: fix the call.
        public static let invalidContext = Code(value: .invalidContext)
        /// The endpoint or policies cannot work (bad URL template, plain `http`, bounds): fix
        /// the configuration.
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// The app's header provider threw, so the request could not carry its credential.
        public static let credentialsUnavailable = Code(value: .credentialsUnavailable)
        /// The backend could not be reached or talked to: connection refused, DNS, TLS, a
        /// redirect. Usually passes; see ``FleetAuthError/isTransient``.
        public static let transportFailure = Code(value: .transportFailure)
        /// No answer within the request timeout or the overall fetch deadline.
        public static let timedOut = Code(value: .timedOut)
        /// The backend answered with a status other than 2xx (see ``FleetAuthError/status``).
        public static let unexpectedStatus = Code(value: .unexpectedStatus)
        /// The backend's answer is unusable: not the configured format, too large, not a JWT,
        /// no expiry, an expiry that disagrees with the JWT, or a lifetime out of bounds.
        public static let malformedResponse = Code(value: .malformedResponse)
        /// The token is for something else: another vehicle or trip, another fleet flavor,
        /// another audience, every vehicle (`"*"`), or the token the fleet service just refused.
        public static let tokenMismatch = Code(value: .tokenMismatch)
        /// The token had expired, or had too little life left to be used.
        public static let tokenExpired = Code(value: .tokenExpired)
        /// `invalidateAll()` ran (sign-out) while this fetch was in flight.
        public static let signedOut = Code(value: .signedOut)

        /// The code's name, such as `tokenMismatch`.
        public var description: String { value.rawValue }
    }

    /// The exact cause behind a ``Code``: what the messages, logs and tests distinguish.
    /// Each case's name says what happened; ``code`` says which public code it falls under.
    package enum Reason: String, Hashable, Sendable, CustomStringConvertible {
        /// Caller mistakes: no context, or one with empty or malformed IDs.
        case missingContext, invalidContext
        /// Configuration that cannot work; `insecureEndpoint` is plain `http` to a remote host,
        /// refused before anything is sent, or a server the device does not trust (a TLS
        /// certificate that is self-signed, expired or for another name, or a challenge the
        /// app's session delegate cancelled), with the transport's error underneath.
        case invalidConfiguration, insecureEndpoint
        /// The app's header provider threw.
        case credentialsUnavailable
        /// The backend was not reached, did not answer in time, or redirected.
        case transportFailure, timedOut, redirectRefused
        /// The backend answered with a status other than 2xx.
        case unexpectedStatus
        /// The answer is unusable: too large, not the format, not a JWT, no or disagreeing
        /// expiry, too long a life, or a provider that completed with nothing.
        case responseTooLarge, malformedResponse, malformedToken, missingExpiry, expiryMismatch
        case lifetimeTooLong, emptyProviderResponse
        /// The token is too old to use.
        case tokenExpired, lifetimeTooShort
        /// The token is for something else: another vehicle or trip, flavor or audience, every
        /// vehicle, what an app reported, or the token the fleet service just refused.
        case scopeMismatch, fleetMismatch, audienceMismatch, wildcardRefused, tokenMismatch
        case rejectedTokenReissued
        /// `invalidateAll()` ran while the fetch was in flight.
        case signedOut

        /// The reason for the public code an app creates an error with.
        package init(_ code: Code) {
            self = Reason(rawValue: code.value.rawValue) ?? .invalidConfiguration
        }

        /// The public code this reason falls under.
        package var code: Code {
            switch self {
            case .missingContext, .invalidContext: .invalidContext
            case .invalidConfiguration, .insecureEndpoint: .invalidConfiguration
            case .credentialsUnavailable: .credentialsUnavailable
            case .transportFailure, .redirectRefused: .transportFailure
            case .timedOut: .timedOut
            case .unexpectedStatus: .unexpectedStatus
            case .responseTooLarge, .malformedResponse, .malformedToken, .missingExpiry, .expiryMismatch,
                .lifetimeTooLong, .emptyProviderResponse:
                .malformedResponse
            case .scopeMismatch, .fleetMismatch, .audienceMismatch, .wildcardRefused, .tokenMismatch,
                .rejectedTokenReissued:
                .tokenMismatch
            case .tokenExpired, .lifetimeTooShort: .tokenExpired
            case .signedOut: .signedOut
            }
        }

        /// The reason's name, such as `scopeMismatch`.
        package var description: String { rawValue }
    }

    /// What an app does about it, as a stable code to switch on.
    public var code: Code { reason.code }
    /// The exact cause: finer than ``code``, named in ``description``.
    package let reason: Reason
    /// What went wrong and what to fix, in words, on one line (control characters from an ID
    /// or a backend escaped). Never holds a token value.
    public let message: String
    /// The vehicle or trip the fetch was for, if known.
    public let scope: AuthorizationScope?
    /// The backend URL, if a request was made.
    package let url: URL?
    /// The HTTP status, if the backend answered.
    public let status: Int?
    /// Seconds the backend asked to wait (`Retry-After`), if it said.
    package let retryAfter: TimeInterval?
    /// The error that caused this one, if any.
    public let underlyingError: (any Error)?

    /// Creates an error, for an app's own provider or a test double to throw.
    public init(
        code: Code, message: String, scope: AuthorizationScope? = nil, url: URL? = nil,
        status: Int? = nil, underlyingError: (any Error)? = nil
    ) {
        self.init(
            reason: Reason(code), message: message, scope: scope, url: url, status: status,
            underlyingError: underlyingError)
    }

    /// Creates an error with its exact cause.
    package init(
        reason: Reason, message: String, scope: AuthorizationScope? = nil, url: URL? = nil,
        status: Int? = nil, retryAfter: TimeInterval? = nil, underlyingError: (any Error)? = nil
    ) {
        self.reason = reason
        self.message = message.escapingControlCharacters
        self.scope = scope
        self.url = url
        self.status = status
        self.retryAfter = retryAfter
        self.underlyingError = underlyingError
    }

    /// Whether trying again later may succeed: transport failures, timeouts, 408, 425,
    /// 429 and 5xx. Everything else fails fast.
    public var isTransient: Bool {
        switch reason {
        case .transportFailure, .timedOut: return true
        case .unexpectedStatus:
            guard let status else { return false }
            return status == 408 || status == 425 || status == 429 || (500...599).contains(status)
        default: return false
        }
    }

    /// A copy with the scope and URL filled in where they were missing.
    package func adding(scope: AuthorizationScope?, url: URL?) -> FleetAuthError {
        FleetAuthError(
            reason: reason, message: message, scope: self.scope ?? scope, url: self.url ?? url,
            status: status, retryAfter: retryAfter, underlyingError: underlyingError)
    }

    /// A copy whose message shows none of `sentValues` (the header values of the request it
    /// answers): see `String.hiding(_:)`.
    package func hiding(_ sentValues: some Sequence<String>) -> FleetAuthError {
        FleetAuthError(
            reason: reason, message: message.hiding(sentValues), scope: scope, url: url, status: status,
            retryAfter: retryAfter, underlyingError: underlyingError)
    }

    /// A copy whose message ends with `sentence`.
    package func appending(_ sentence: String) -> FleetAuthError {
        FleetAuthError(
            reason: reason, message: "\(message) \(sentence)", scope: scope, url: url, status: status,
            retryAfter: retryAfter, underlyingError: underlyingError)
    }

    /// `FleetAuthError.tokenMismatch/scopeMismatch (vehicle v-42, HTTP 200): message`: the
    /// ``code`` an app switches on, the finer cause where it has one, what the fetch was for,
    /// and the message.
    public var description: String {
        var details: [String] = []
        if let scope { details.append(scope.description) }
        if let status { details.append("HTTP \(status)") }
        if let redactedURL { details.append(redactedURL) }
        let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        return "FleetAuthError.\(summary)\(suffix): \(message)"
    }

    /// The code, and the finer cause after a slash where it differs: `tokenMismatch/scopeMismatch`.
    package var summary: String {
        reason.rawValue == code.description ? code.description : "\(code)/\(reason)"
    }

    /// The backend URL as sent, safe to show: see `redacted(_:)`.
    package var redactedURL: String? { url.map(Self.redacted) }

    /// The URL as sent, safe to show: the rule for a URL's text, below.
    package static func redacted(_ url: URL) -> String { redacted(url.absoluteString) }

    /// A URL, or a token URL template, safe to show: scheme, host, port and path (control
    /// characters escaped, placeholders kept), then the query's item names with every value
    /// hidden (`?vehicleId=hidden`; an item without `=` shows as `=hidden`, as it may be a
    /// key); never user info or fragment. What FleetAuth's messages, descriptions, events and
    /// mirrors show. Hiding too much is harmless here: user info ends at the last `@` before
    /// the query (a password may hold `/` or `#`), so an `@` in the path takes what comes
    /// before it along.
    package static func redacted(_ text: String) -> String {
        var shown = text
        let authority = text.range(of: "://")?.upperBound ?? text.startIndex
        let query = shown[authority...].firstIndex(of: "?") ?? shown.endIndex
        if let at = shown[authority..<query].lastIndex(of: "@") { shown.removeSubrange(authority...at) }
        if let fragment = shown.firstIndex(of: "#") { shown = String(shown[..<fragment]) }
        if let query = shown.firstIndex(of: "?") {
            let items = shown[shown.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
                .map { item in item.isEmpty ? "" : (item.firstIndex(of: "=").map { item[..<$0] } ?? "") + "=hidden" }
            shown = shown[...query] + items.joined(separator: "&")
        }
        return shown.escapingControlCharacters
    }
}

/// What `dump` and mirrors show of an error: what ``FleetAuthError/description`` shows (the
/// URL redacted, the underlying error as its description), never a stored URL or query.
extension FleetAuthError: CustomReflectable {
    /// The code, cause, message, scope, status, redacted URL and underlying error's description.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [
            ("code", code.description), ("reason", reason.rawValue), ("message", message),
        ]
        if let scope { children.append(("scope", scope.description)) }
        if let status { children.append(("status", status)) }
        if let redactedURL { children.append(("url", redactedURL)) }
        if let retryAfter { children.append(("retryAfter", retryAfter)) }
        if let underlyingError { children.append(("underlyingError", String(describing: underlyingError))) }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}

extension FleetAuthError: LocalizedError {
    /// Same as ``description``.
    public var errorDescription: String? { description }
}
