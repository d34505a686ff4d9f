package import FleetAuthCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The header fields a request goes out with, checked here on their bytes and set on its
/// `URLRequest` at once. FoundationNetworking's `setValue(_:forHTTPHeaderField:)` checked each
/// value character by character: 32 to 40 µs a fleet call with a bearer token's 730
/// characters, about a twentieth of a simulated update's CPU over loopback HTTP (`send(_:)` took
/// 6.0 % of a 2,000-vehicle simulator's samples with it, 1.8 % without). It also let a folded
/// line and other control characters through in a value, and checked no name.
extension URLSessionTransport {
    /// `request`'s headers, with `Accept-Encoding: identity` unless the request names an
    /// encoding itself (an encoded body is counted as it is decoded all the same; asking for
    /// none keeps an honest backend from sending a small body that inflates). Names go out as
    /// given. Throws `invalidConfiguration`, never showing a value or a name that may hold a
    /// credential, for a name that is not an HTTP field name, a value holding a control
    /// character other than the tab, or two names that differ only in case: nothing is sent.
    package static func headerFields(of request: TransportRequest) throws(FleetAuthError) -> [String: String] {
        let headers = Array(request.headers)
        for (index, (name, value)) in headers.enumerated() {
            if name.isEmpty { throw refusal(of: request, "a header with an empty name", fix: "Name it or remove it.") }
            if let bad = name.unicodeScalars.first(where: { !HTTPField.isTokenCharacter($0) }) {
                throw refusal(
                    of: request,
                    "a header \(shown(name)) whose name holds \(HTTPField.describe(bad)), which no HTTP field name may (letters, digits, !#$%&'*+-.^_|~ and the backtick only)",
                    fix: "Rename it.")
            }
            if let bad = value.unicodeScalars.first(where: HTTPField.isControlCharacter) {
                throw refusal(
                    of: request,
                    "a header \(shown(name)) whose value holds \(HTTPField.describe(bad)), which would end the header early or corrupt it",
                    fix: "Remove it from the value.")
            }
            if let twin = headers[..<index].first(where: { HeaderLookup.sameName($0.key, name) })?.key {
                throw refusal(
                    of: request,
                    "the header \(shown(name)) twice, as \(shown(twin)) and \(shown(name)) (field names ignore case), so which one is sent would be left to chance",
                    fix: "Keep one of them.")
            }
        }
        var fields = request.headers
        if request.header("Accept-Encoding") == nil { fields["Accept-Encoding"] = "identity" }
        return fields
    }

    /// `'name'`, or its length alone when it may hold a credential (a token pasted as a name).
    private static func shown(_ name: String) -> String {
        CredentialHeader.mayHoldCredential(named: "", value: name)
            ? "(its name of \(name.count) characters not shown: it may hold a credential)" : "'\(name)'"
    }

    private static func refusal(of request: TransportRequest, _ problem: String, fix: String) -> FleetAuthError {
        FleetAuthError(
            reason: .invalidConfiguration,
            message:
                "The request to \(request.url.host ?? "the server") carries \(problem); nothing was sent. \(fix)",
            url: request.url)
    }
}

/// What HTTP allows in a header field.
enum HTTPField {
    /// Whether `scalar` may appear in a field name: a letter, a digit, one of `!#$%&'*+-.^_|~`,
    /// or the backtick.
    static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "0"..."9", "A"..."Z", "a"..."z": true
        default: "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
        }
    }

    /// Whether `scalar` may not appear in a field value: a control character other than the
    /// tab (a carriage return or line feed would end the header, and could start another).
    static func isControlCharacter(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F
    }

    /// `scalar` in words: "a line feed", "':'", "U+00E9".
    static func describe(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\r": "a carriage return"
        case "\n": "a line feed"
        case "\0": "a NUL"
        case " ": "a space"
        case "\t": "a tab"
        case _ where scalar.value < 0x20 || scalar.value >= 0x7F: String(format: "U+%04X", scalar.value)
        default: "'\(scalar)'"
        }
    }
}
