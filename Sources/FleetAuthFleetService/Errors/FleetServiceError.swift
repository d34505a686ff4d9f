public import FleetAuthCore

/// Why a call to the fleet service (a vehicle update, a trip fetch) failed, and whose
/// fault it was: the token, the network, the service, or the caller's input.
///
/// Like ``/FleetAuthCore/FleetAuthError`` it never holds a token value; it names the token by
/// ``tokenFingerprint``.
public struct FleetServiceError: Error, CustomStringConvertible {
    /// Who is at fault. New faults may be added without breaking anyone.
    public struct Fault: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable { case token, network, service, caller }
        private let value: Value

        /// No usable token: the provider failed, the token had expired, or the fleet
        /// service rejected it (401/403) even after one fresh token.
        public static let token = Fault(value: .token)
        /// The request did not get an answer: connection failure or timeout, or a TLS or trust
        /// failure (`insecureEndpoint`), whose message says no retry helps.
        public static let network = Fault(value: .network)
        /// The fleet service answered with an error status or an unreadable body.
        public static let service = Fault(value: .service)
        /// The caller's input was invalid (an impossible location, an empty ID, a header the
        /// transport refuses to send); nothing was sent.
        public static let caller = Fault(value: .caller)

        /// `token`, `network`, `service` or `caller`.
        public var description: String { value.rawValue }
    }

    /// Whose fault it was.
    public let fault: Fault
    /// What went wrong and what to do, in words.
    public let message: String
    /// The vehicle or trip the call was for.
    public let scope: AuthorizationScope?
    /// The HTTP status, if the fleet service answered.
    public let status: Int?
    /// The fingerprint of the token that was sent or refused, if any.
    public let tokenFingerprint: String?
    /// The error that caused this one: a ``/FleetAuthCore/FleetAuthError`` for token faults, the
    /// transport's error for network faults.
    public let underlyingError: (any Error)?

    /// Creates an error; control characters in `message` are escaped, so that it stays one line.
    public init(
        fault: Fault, message: String, scope: AuthorizationScope? = nil, status: Int? = nil,
        tokenFingerprint: String? = nil, underlyingError: (any Error)? = nil
    ) {
        self.fault = fault
        self.message = message.escapingControlCharacters
        self.scope = scope
        self.status = status
        self.tokenFingerprint = tokenFingerprint
        self.underlyingError = underlyingError
    }

    /// Throws what a call's package-internal steps threw as the public calls throw it: the
    /// error itself when it is a fleet service error (the only kind those steps throw), else
    /// a `network` fault naming it.
    ///
    /// Those steps (``AuthorizedCaller``'s token, delivery and rule, the reporter's request)
    /// throw untyped, and make their errors in functions that throw them: an async function
    /// keeps a slot in its frame for each 104-byte error of this type that a call it makes may
    /// throw or that it makes itself, and every call in flight holds those frames. (Its fields
    /// in one object would make the slot 8 bytes, but turn its public `let`s into computed
    /// properties: a changed line of the public API, for a major version.)
    @inline(never)
    package static func rethrow(_ error: any Error, scope: AuthorizationScope) throws(FleetServiceError) -> Never {
        if let error = error as? FleetServiceError { throw error }
        throw FleetServiceError(fault: .network, message: "\(error)", scope: scope, underlyingError: error)
    }

    /// `FleetServiceError.token (vehicle v-42, HTTP 401, tok_1a2b3c4d): message`.
    public var description: String {
        var details: [String] = []
        if let scope { details.append(scope.description) }
        if let status { details.append("HTTP \(status)") }
        if let tokenFingerprint { details.append(tokenFingerprint) }
        let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        return "FleetServiceError.\(fault)\(suffix): \(message)"
    }
}
