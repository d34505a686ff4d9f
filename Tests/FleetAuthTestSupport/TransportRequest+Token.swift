package import FleetAuthCore
package import Foundation

extension TransportRequest {
    /// A request as a provider sends it to its token backend (the transport streams its
    /// answer and counts it as it arrives), for tests of the transport's two paths.
    package static func askingForToken(url: URL) -> TransportRequest {
        var request = TransportRequest(url: url)
        request.asksForToken = true
        return request
    }

    /// A request to `url` as a token request (`asksForToken`) or a fleet call.
    package static func to(_ url: URL, askingForToken: Bool) -> TransportRequest {
        askingForToken ? .askingForToken(url: url) : TransportRequest(url: url)
    }
}
