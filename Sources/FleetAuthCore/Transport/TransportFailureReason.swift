import Foundation

/// Words for why a request got no answer, for the messages of errors that wrap a
/// transport's error: "connection refused", "host not found", never just a type name.
package enum TransportFailureReason {
    /// A short reason for `error`: the network condition a `URLError` or POSIX error names,
    /// the message of a ``FleetAuthError``, or the error's type and code.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? FleetAuthError { return error.message }
        if error is CancellationError { return "cancelled" }
        if let error = error as? URLError { return describe(error.code) }
        if let error = error as? POSIXError { return "\(posixReason(error.code)); POSIX error \(error.code.rawValue)" }
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain, let code = POSIXErrorCode(rawValue: Int32(nsError.code)) {
            return "\(posixReason(code)); POSIX error \(nsError.code)"
        }
        return "\(type(of: error)) \(nsError.domain) \(nsError.code)"
    }

    private static func describe(_ code: URLError.Code) -> String {
        let reason: String =
            switch code {
            case .cannotConnectToHost: "connection refused: nothing listens at that host and port"
            case .cannotFindHost, .dnsLookupFailed: "host not found: the name does not resolve"
            case .notConnectedToInternet: "the device is offline"
            case .networkConnectionLost: "the connection was lost before the answer was complete"
            case .timedOut: "timed out"
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
                "the TLS handshake failed (certificate or protocol)"
            case .badServerResponse: "the answer was not valid HTTP"
            case .badURL, .unsupportedURL: "the URL cannot be requested"
            case .appTransportSecurityRequiresSecureConnection: "App Transport Security requires https"
            case .cancelled: "cancelled"
            default: "network error"
            }
        return "\(reason); URLError \(code.rawValue)"
    }

    private static func posixReason(_ code: POSIXErrorCode) -> String {
        switch code {
        case .ECONNREFUSED: "connection refused"
        case .ECONNRESET: "connection reset by the server"
        case .ETIMEDOUT: "timed out"
        case .EHOSTUNREACH, .ENETUNREACH: "host unreachable"
        case .ENETDOWN: "the network is down"
        default: "system error"
        }
    }
}
