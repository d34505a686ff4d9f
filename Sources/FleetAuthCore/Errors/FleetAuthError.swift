public import Foundation

/// The error type of token fetching: everything the engine and providers throw.
///
/// It carries a stable ``code`` to switch on, a ``message`` that says what went wrong and
/// what to fix, and the context a user needs to act: the ``scope`` (vehicle or trip),
/// the backend ``url`` and HTTP ``status`` where there was one, and the
/// ``underlyingError``. No property, description or message ever holds a token's value.
public struct FleetAuthError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable error code. New codes may be added without breaking anyone.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case missingContext, invalidContext, invalidConfiguration, insecureEndpoint, credentialsUnavailable
            case transportFailure, timedOut, unexpectedStatus, redirectRefused, responseTooLarge
            case malformedResponse, malformedToken, missingExpiry, expiryMismatch
            case tokenExpired, lifetimeTooShort, lifetimeTooLong, scopeMismatch, fleetMismatch, audienceMismatch
            case wildcardRefused
            case rejectedTokenReissued, signedOut, emptyProviderResponse
        }
        private let value: Value

        /// No context was passed to `fetchToken(with:completion:)`.
        public static let missingContext = Code(value: .missingContext)
        /// The context's IDs are empty or malformed.
        public static let invalidContext = Code(value: .invalidContext)
        /// The endpoint or policy configuration cannot work (bad URL template, bounds).
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// Plain `http` to a non-loopback host without the opt-in.
        public static let insecureEndpoint = Code(value: .insecureEndpoint)
        /// The app's header provider threw, so the request could not carry its credential.
        public static let credentialsUnavailable = Code(value: .credentialsUnavailable)
        /// The transport failed: connection refused, reset, DNS, TLS.
        public static let transportFailure = Code(value: .transportFailure)
        /// No answer within the request timeout or the overall fetch deadline.
        public static let timedOut = Code(value: .timedOut)
        /// The backend answered with a status other than 2xx.
        public static let unexpectedStatus = Code(value: .unexpectedStatus)
        /// The backend redirected the request; FleetAuth does not follow token redirects.
        public static let redirectRefused = Code(value: .redirectRefused)
        /// The response body exceeded the size cap.
        public static let responseTooLarge = Code(value: .responseTooLarge)
        /// The body is not of the configured response format.
        public static let malformedResponse = Code(value: .malformedResponse)
        /// The token is not a decodable JWT.
        public static let malformedToken = Code(value: .malformedToken)
        /// Neither the JWT nor the response says when the token expires.
        public static let missingExpiry = Code(value: .missingExpiry)
        /// The response's expiry disagrees with the JWT's `exp` (often a unit mix-up).
        public static let expiryMismatch = Code(value: .expiryMismatch)
        /// The token had already expired when it arrived.
        public static let tokenExpired = Code(value: .tokenExpired)
        /// The token arrived with too little life left to be used.
        public static let lifetimeTooShort = Code(value: .lifetimeTooShort)
        /// The token lives longer than the fleet service accepts (one hour).
        public static let lifetimeTooLong = Code(value: .lifetimeTooLong)
        /// The token's `authorization` claim does not cover the requested vehicle or trip.
        public static let scopeMismatch = Code(value: .scopeMismatch)
        /// A vehicle token names its vehicle under the other fleet flavor's claim key.
        public static let fleetMismatch = Code(value: .fleetMismatch)
        /// The token's `aud` is not the audience the fleet service requires.
        public static let audienceMismatch = Code(value: .audienceMismatch)
        /// The token covers every vehicle or trip (`"*"`), and wildcards are not allowed.
        public static let wildcardRefused = Code(value: .wildcardRefused)
        /// A forced refetch returned the token the fleet service had just rejected.
        public static let rejectedTokenReissued = Code(value: .rejectedTokenReissued)
        /// `invalidateAll()` ran (sign-out) while this fetch was in flight.
        public static let signedOut = Code(value: .signedOut)
        /// A provider called its completion with neither a token nor an error.
        public static let emptyProviderResponse = Code(value: .emptyProviderResponse)

        /// The code's name, such as `scopeMismatch`.
        public var description: String { value.rawValue }
    }

    /// What went wrong, as a stable code.
    public let code: Code
    /// What went wrong and what to fix, in words. Never holds a token value.
    public let message: String
    /// The vehicle or trip the fetch was for, if known.
    public let scope: AuthorizationScope?
    /// The backend URL, if a request was made.
    public let url: URL?
    /// The HTTP status, if the backend answered.
    public let status: Int?
    /// Seconds the backend asked to wait (`Retry-After`), if it said.
    public let retryAfter: TimeInterval?
    /// The error that caused this one, if any.
    public let underlyingError: (any Error)?

    /// Creates an error.
    public init(
        code: Code, message: String, scope: AuthorizationScope? = nil, url: URL? = nil,
        status: Int? = nil, retryAfter: TimeInterval? = nil, underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.scope = scope
        self.url = url
        self.status = status
        self.retryAfter = retryAfter
        self.underlyingError = underlyingError
    }

    /// Whether trying again later may succeed: transport failures, timeouts, 408, 425,
    /// 429 and 5xx. Everything else fails fast.
    public var isTransient: Bool {
        switch code {
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
            code: code, message: message, scope: self.scope ?? scope, url: self.url ?? url,
            status: status, retryAfter: retryAfter, underlyingError: underlyingError)
    }

    /// A copy whose message ends with `sentence`.
    package func appending(_ sentence: String) -> FleetAuthError {
        FleetAuthError(
            code: code, message: "\(message) \(sentence)", scope: scope, url: url, status: status,
            retryAfter: retryAfter, underlyingError: underlyingError)
    }

    /// `FleetAuthError.scopeMismatch (vehicle v-42, HTTP 200): message`.
    public var description: String {
        var details: [String] = []
        if let scope { details.append(scope.description) }
        if let status { details.append("HTTP \(status)") }
        if let url { details.append(Self.redacted(url)) }
        let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        return "FleetAuthError.\(code)\(suffix): \(message)"
    }

    /// The description plus the underlying error's type and description.
    public var debugDescription: String {
        guard let underlyingError else { return description }
        return "\(description) [underlying \(type(of: underlyingError)): \(underlyingError)]"
    }

    /// The URL without user info, query or fragment: queries may carry credentials.
    private static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return "<url>"
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "<url>"
    }
}

extension FleetAuthError: LocalizedError {
    /// Same as ``description``.
    public var errorDescription: String? { description }
}
