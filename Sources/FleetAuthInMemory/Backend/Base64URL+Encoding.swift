package import FleetAuthCore
package import Foundation

extension Base64URL {
    /// Encodes bytes as unpadded base64url: how the in-memory backend mints its tokens.
    package static func encode(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
