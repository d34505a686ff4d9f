import FleetAuthCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The header fields a request goes out with, checked here on their bytes and set on its
/// `URLRequest` at once. FoundationNetworking's `setValue(_:forHTTPHeaderField:)` checked each
/// value character by character: 32 to 40 µs a fleet call with a bearer token's 730
/// characters, about a twentieth of a simulated update's CPU over loopback HTTP (`send(_:)` took
/// 6.0 % of a 2,000-vehicle simulator's samples with it, 1.8 % without).
extension URLSessionTransport {
    /// `request`'s headers, with `Accept-Encoding: identity` unless the request names an
    /// encoding itself (an encoded body is counted as it is decoded all the same; asking for
    /// none keeps an honest backend from sending a small body that inflates). Throws
    /// `invalidConfiguration`, naming the header and never its value, for a name that is not
    /// an HTTP field name, a value holding a line break or another control character, or two
    /// names that differ only in case: nothing is sent.
    static func headerFields(of request: TransportRequest) throws(FleetAuthError) -> [String: String] {
        let headers = Array(request.headers)
        for (index, (name, value)) in headers.enumerated() {
            guard HTTPField.isName(name) else {
                throw refusal(
                    of: request,
                    "a header named '\(name.escapingControlCharacters)', which is not an HTTP field name (letters, digits and !#$%&'*+-.^_`|~ only)",
                    fix: "Rename it.")
            }
            guard HTTPField.isValue(value) else {
                throw refusal(
                    of: request,
                    "a header '\(name)' whose value holds a line break or another control character, which would end the header early",
                    fix: "Remove it from the value.")
            }
            if let twin = headers[..<index].first(where: { $0.key.lowercased() == name.lowercased() })?.key {
                throw refusal(
                    of: request,
                    "the header '\(name)' twice, as '\(twin)' and '\(name)' (field names ignore case), so which one is sent would be left to chance",
                    fix: "Keep one of them.")
            }
        }
        var fields = request.headers
        if request.header("Accept-Encoding") == nil { fields["Accept-Encoding"] = "identity" }
        return fields
    }

    private static func refusal(of request: TransportRequest, _ problem: String, fix: String) -> FleetAuthError {
        FleetAuthError(
            reason: .invalidConfiguration,
            message:
                "The request to \(request.url.host ?? "the server") carries \(problem); nothing was sent. \(fix)",
            url: request.url)
    }
}

/// What HTTP allows in a header field, judged on UTF-8 bytes.
enum HTTPField {
    /// Whether `name` is a field name: one or more token characters.
    static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `value` can be sent as a field value: no control character but the tab (a
    /// carriage return or line feed would end the header, and could start another).
    static func isValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// A letter, a digit, or one of `!#$%&'*+-.^_`|~`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
