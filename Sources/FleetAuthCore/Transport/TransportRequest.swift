public import Foundation

/// An HTTP request as FleetAuth hands it to an ``HTTPTransport``.
public struct TransportRequest: Sendable, CustomStringConvertible, CustomReflectable {
    /// The method, upper-case: `GET`, `POST`, `PUT`, `PATCH`.
    public var method: String
    /// The absolute URL.
    public var url: URL
    /// Header fields. Values may be credentials: never log them.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// Seconds the transport may wait for the whole response.
    public var timeout: TimeInterval
    /// Set on the requests a provider sends to the token backend, so a transport can keep
    /// them from queuing behind the fleet-service calls that wait for their tokens
    /// (`URLSessionTransport` gives them a connection pool of their own).
    package var asksForToken = false

    /// Creates a request.
    public init(
        method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil,
        timeout: TimeInterval = 30
    ) {
        // Most methods come upper-case already: `uppercased()` took a tenth of a microsecond
        // at every request of a simulator.
        let isUpperASCII = method.utf8.allSatisfy { $0 < 0x80 && !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
        self.method = isUpperASCII ? method : method.uppercased()
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The value of the header named `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        HeaderLookup.value(of: name, in: headers)
    }

    /// `GET https://host/path` with header names only: values may be credentials.
    public var description: String {
        let names = headers.keys.sorted().joined(separator: ", ")
        return "\(method) \(url.scheme ?? "?")://\(url.host ?? "?")\(url.path) headers: [\(names)]"
    }

    /// A mirror with header names and the body's size only, so `dump` and debuggers show
    /// no credential or token.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method, "url": "\(url.scheme ?? "?")://\(url.host ?? "?")\(url.path)",
                "headerNames": headers.keys.sorted(), "bodyBytes": body?.count ?? 0, "timeout": timeout,
            ], displayStyle: .struct)
    }
}

/// Case-insensitive header lookup shared by requests and responses.
package enum HeaderLookup {
    /// The value of header `name` in `headers`, ignoring case.
    package static func value(of name: String, in headers: [String: String]) -> String? {
        if let exact = headers[name] { return exact }
        return headers.first { sameName($0.key, name) }?.value
    }

    /// Whether `a` and `b` name the same header: equal but for the case of ASCII letters (a
    /// header's name is ASCII). Compares bytes, making no lowercased copies.
    package static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
