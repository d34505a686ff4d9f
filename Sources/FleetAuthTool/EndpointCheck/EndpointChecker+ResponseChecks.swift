import FleetAuthCore
import Foundation

/// The checks of an answer's framing: its status, date, content type and size.
extension EndpointChecker {
    /// The `Date` header: present and readable, missing, sent twice, or unreadable.
    static func dateFinding(_ response: TransportResponse) -> Finding {
        if TokenResponseParser.serverDate(response) != nil {
            return Finding("date-header", .ok, response.header("Date") ?? "")
        }
        guard let value = response.header("Date") else {
            return Finding(
                "date-header", .warning, "missing",
                fix:
                    "send a Date header: without one the SDK takes iat as the server's time and cannot tell an old token"
            )
        }
        if value.components(separatedBy: "GMT").count > 2 {
            return Finding(
                "date-header", .warning, "sent more than once (\(value))",
                fix: "send exactly one Date header: the copies arrive joined into one value no client can read")
        }
        return Finding(
            "date-header", .warning, "unreadable (\(value))",
            fix: "send an HTTP date such as Mon, 23 Nov 2026 08:00:00 GMT (RFC 9110 IMF-fixdate)")
    }

    /// A failure for a body that is a web page (often a login or error page served with
    /// 200), which no token format reads; `nil` for anything else.
    static func webPageFinding(_ response: TransportResponse) -> Finding? {
        // By the body, not the Content-Type: a JWT sent as text/html is still read by the SDK.
        let start = response.body.first { !" \t\r\n".utf8.contains($0) }
        guard start == UInt8(ascii: "<") else { return nil }
        return Finding(
            "shape", .failure, "an HTML page (\(response.body.count) bytes), not a token",
            fix:
                "the URL answers a web page, often a login or error page: check the path, and that the credential header is accepted"
        )
    }

    func checkStatus(_ response: TransportResponse, request: TransportRequest, into findings: inout [Finding])
        -> Bool
    {
        if (300...399).contains(response.status) {
            let location = response.header("Location") ?? ""
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL
            // Only the target's origin is shown: its path or query may echo what was sent.
            let targetOrigin = target.flatMap(HTTPOrigin.init(url:))
            findings.append(
                targetOrigin == HTTPOrigin(url: request.url)
                    ? Finding(
                        "redirect", .warning, "HTTP \(response.status) to another path of the same origin",
                        fix: "point the SDK at the final URL: token requests do not follow redirects")
                    : Finding(
                        "redirect", .failure,
                        "HTTP \(response.status) to another origin (\(targetOrigin?.description ?? "unknown"))",
                        fix: "never redirect token requests to another origin: the app's credential would travel there")
            )
            return false
        }
        guard (200...299).contains(response.status) else {
            let said = TokenResponseParser.bodySummary(of: response.body).map { "; its body: \($0)" } ?? ""
            findings.append(
                Finding(
                    "status", .failure, "HTTP \(response.status)\(said)",
                    fix: statusFix(response.status)))
            return false
        }
        findings.append(Finding("status", .ok, "HTTP \(response.status)"))
        return true
    }

    /// What to do about a status other than 2xx, in the checker's flags.
    func statusFix(_ status: Int) -> String {
        switch status {
        case 401, 403:
            let names = options.headers.keys.sorted().joined(separator: ", ")
            guard CredentialHeader.carriesCredential(options.headers) else {
                let others = names.isEmpty ? "" : "; --header sent only \(names)"
                return
                    "no credential was sent (no Authorization header\(others)): the backend wants the app's credential: send it with --header 'Authorization: Bearer <credential>'"
            }
            return
                "the backend refused the credential sent with --header (\(names)): use a current one of a signed-in user of this backend, with the header name and scheme it expects"
        case 404:
            return
                "check the --url path, and that it names the ID where the backend expects it (\(URLTemplate.placeholderList(for: [options.scope.kind])), or the query item FleetAuth adds without one)"
        default:
            return "the endpoint must answer 200 with a token"
        }
    }

    func checkContentType(_ response: TransportResponse, into findings: inout [Finding]) {
        let type = response.header("Content-Type")?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard let type else {
            findings.append(Finding("content-type", .warning, "none", fix: "send Content-Type: application/json"))
            return
        }
        let expected = ["application/json", "application/jwt", "text/plain"]
        findings.append(
            expected.contains(type)
                ? Finding("content-type", .ok, type)
                : Finding(
                    "content-type", .warning, type, fix: "send application/json (or application/jwt for a bare token)"))
    }

    func checkBodySize(_ response: TransportResponse, into findings: inout [Finding]) -> Bool {
        let size = response.body.count
        if size > Self.bodyCap {
            findings.append(
                Finding(
                    "body-size", .failure, "\(size) bytes",
                    fix: "return only the token and its expiry (the SDK caps bodies at \(Self.bodyCap) bytes)"))
            return false
        }
        findings.append(
            size > 16 * 1024
                ? Finding("body-size", .warning, "\(size) bytes", fix: "return only the token and its expiry")
                : Finding("body-size", .ok, "\(size) bytes"))
        return true
    }
}
