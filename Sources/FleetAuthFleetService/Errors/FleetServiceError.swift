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
        /// The request did not get an answer: connection failure or timeout.
        public static let network = Fault(value: .network)
        /// The fleet service answered with an error status or an unreadable body.
        public static let service = Fault(value: .service)
        /// The caller's input was invalid (an impossible location, an empty ID); nothing
        /// was sent.
        public static let caller = Fault(value: .caller)

        /// `token`, `network`, `service` or `caller`.
        public var description: String { value.rawValue }
    }

    /// The fields, in one block: every async call that can throw this error keeps room for
    /// one in its caller's frame, and every vehicle of a simulator has such frames in flight
    /// (one reference there, against 104 bytes for the fields themselves).
    private final class Fields: Sendable {
        let fault: Fault
        let message: String
        let scope: AuthorizationScope?
        let status: Int?
        let tokenFingerprint: String?
        let underlyingError: (any Error)?

        init(
            fault: Fault, message: String, scope: AuthorizationScope?, status: Int?, tokenFingerprint: String?,
            underlyingError: (any Error)?
        ) {
            (self.fault, self.message, self.scope) = (fault, message, scope)
            (self.status, self.tokenFingerprint, self.underlyingError) = (status, tokenFingerprint, underlyingError)
        }
    }

    private let fields: Fields

    /// Whose fault it was.
    public var fault: Fault { fields.fault }
    /// What went wrong and what to do, in words.
    public var message: String { fields.message }
    /// The vehicle or trip the call was for.
    public var scope: AuthorizationScope? { fields.scope }
    /// The HTTP status, if the fleet service answered.
    public var status: Int? { fields.status }
    /// The fingerprint of the token that was sent or refused, if any.
    public var tokenFingerprint: String? { fields.tokenFingerprint }
    /// The error that caused this one: a ``/FleetAuthCore/FleetAuthError`` for token faults, the
    /// transport's error for network faults.
    public var underlyingError: (any Error)? { fields.underlyingError }

    /// Creates an error; control characters in `message` are escaped, so that it stays one line.
    public init(
        fault: Fault, message: String, scope: AuthorizationScope? = nil, status: Int? = nil,
        tokenFingerprint: String? = nil, underlyingError: (any Error)? = nil
    ) {
        fields = Fields(
            fault: fault, message: message.escapingControlCharacters, scope: scope, status: status,
            tokenFingerprint: tokenFingerprint, underlyingError: underlyingError)
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
