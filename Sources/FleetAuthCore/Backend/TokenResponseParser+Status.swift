package import Foundation

/// The answer's framing: its status, and the headers and error body messages quote.
extension TokenResponseParser {
    /// The error the SDK makes of a non-2xx answer (transient for 408, 425, 429 and 5xx) to a
    /// request for `scope`; `nil` for 2xx. `credentialSent` says whether the request carried a
    /// credential (a header ``CredentialHeader`` names one by), so that a 401 or 403 tells a
    /// credential the backend refused from none sent; `nil` when that is not known.
    package func statusError(
        _ response: TransportResponse, scope: AuthorizationScope? = nil, credentialSent: Bool? = nil
    ) -> FleetAuthError? {
        switch response.status {
        case 200...299: return nil
        case 300...399:
            return FleetAuthError(
                reason: .redirectRefused,
                message:
                    "The backend redirected (HTTP \(response.status)); token requests do not follow redirects, so the app's credential cannot leak to another host. Point the endpoint at the final URL.",
                status: response.status)
        default:
            let retryAfter = Self.retryAfter(response)
            let hint =
                switch response.status {
                case 401, 403: Self.credentialHint(sent: credentialSent)
                case 404:
                    "check the TokenEndpoint's `url`: its path, and that it names the ID where the backend expects it (\(URLTemplate.placeholderList(for: scope.map { [$0.kind] } ?? [])), or the query item FleetAuth adds without one)"
                case 429: "the backend is rate-limiting; FleetAuth backs off"
                case 500...599: "the backend failed; FleetAuth retries with backoff"
                default: "check the endpoint configuration"
                }
            let said = Self.bodySummary(of: response.body).map { " Its body: \($0)." } ?? ""
            return FleetAuthError(
                reason: .unexpectedStatus, message: "The backend answered HTTP \(response.status): \(hint).\(said)",
                status: response.status, retryAfter: retryAfter)
        }
    }

    /// What a 401 or 403 means, by whether the request carried a credential.
    private static func credentialHint(sent: Bool?) -> String {
        switch sent {
        case false?:
            "no credential was sent (the TokenEndpoint's `headers` closure sent no Authorization header); return the signed-in user's credential from it, such as `[\"Authorization\": \"Bearer \\(credential)\"]`"
        case true?:
            "the backend refused the credential it was sent; check that the TokenEndpoint's `headers` closure sends a current credential of a signed-in user, with the header name and scheme the backend expects"
        case nil:
            "the backend refused the app's credential, or none was sent; check what the TokenEndpoint's `headers` closure sends"
        }
    }

    /// What an error body was, in words that cannot carry anything the request sent: its
    /// size and kind, and, when it is a JSON object whose `error` or `code` is one of the
    /// error codes of OAuth 2.0 (RFC 6749, 6750, 8628), that code, which FleetAuth's own list
    /// spells. Never a byte of the body's own text: a backend may echo the headers it was
    /// sent, credential included. `nil` for an empty body.
    package static func bodySummary(of body: Data) -> String? {
        guard !body.isEmpty else { return nil }
        let size = "\(body.count) byte\(body.count == 1 ? "" : "s")"
        if let object = (try? JSONSerialization.jsonObject(with: body.prefix(64 * 1024))) as? [String: Any] {
            let code = ["error", "code"].lazy.compactMap { object[$0] as? String }
                .first(where: oauthErrorCodes.contains)
            let keys = "\(object.count) key\(object.count == 1 ? "" : "s")"
            return
                "a JSON object of \(size) with \(keys)\(code.map { ", error `\($0)`" } ?? "") (not quoted: a backend may echo what it was sent)"
        }
        let kind = String(data: body, encoding: .utf8) == nil ? "binary data" : "text"
        return "\(size) of \(kind) (not quoted: a backend may echo what it was sent)"
    }

    /// The same as ``bodySummary(of:)``: 1.0.0 quoted the body's start here, which could carry
    /// what a backend echoed; the name stays for the API check against that release.
    package static func excerpt(of body: Data) -> String? { bodySummary(of: body) }

    /// The error codes OAuth 2.0 registers for token and resource errors.
    private static let oauthErrorCodes: Set<String> = [
        "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
        "invalid_scope", "invalid_token", "insufficient_scope", "access_denied", "server_error",
        "temporarily_unavailable", "expired_token", "authorization_pending", "slow_down",
    ]

    /// The `Date` header, if present and well-formed (IMF-fixdate).
    package static func serverDate(_ response: TransportResponse) -> Date? {
        response.header("Date").flatMap(HTTPDate.parse)
    }

    /// `Retry-After` in seconds, from delta-seconds or an HTTP date.
    package static func retryAfter(_ response: TransportResponse) -> TimeInterval? {
        guard let raw = response.header("Retry-After")?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else {
            return nil
        }
        if let seconds = Double(raw), seconds.isFinite, seconds >= 0 { return min(seconds, 86_400) }
        guard let date = HTTPDate.parse(raw), let now = serverDate(response) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
