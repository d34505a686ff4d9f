public import Foundation

/// An HTTP response as an ``HTTPTransport`` returns it.
public struct TransportResponse: Sendable, CustomStringConvertible {
    /// The status code.
    public var status: Int
    /// Header fields.
    public var headers: [String: String]
    /// The body. It may hold a token: never log it.
    public var body: Data
    /// The URL that answered, if the transport knows it (after any redirect).
    public var url: URL?

    /// Creates a response; `url` is the URL that answered, if the transport knows it (after
    /// any redirect).
    public init(status: Int, headers: [String: String] = [:], body: Data = Data(), url: URL? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The value of the header named `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        HeaderLookup.value(of: name, in: headers)
    }

    /// `HTTP 200, 512 bytes`: the body is never shown.
    public var description: String { "HTTP \(status), \(body.count) bytes" }
}
