package import Foundation

/// A URL's scheme, host and port, lowercased and with the scheme's default port filled in:
/// what an answer must share with its request to count as the request's, so that a redirect
/// to another port or from https to http of the same host is told apart too.
package struct HTTPOrigin: Hashable, Sendable, CustomStringConvertible {
    package let scheme: String
    package let host: String
    package let port: Int

    /// The origin of `url`; `nil` without a scheme or host.
    package init?(url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    }

    /// `https://api.example.com:443`, control characters escaped.
    package var description: String { "\(scheme)://\(host):\(port)".escapingControlCharacters }
}
