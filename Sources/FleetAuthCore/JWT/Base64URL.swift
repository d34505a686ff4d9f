package import Foundation

/// Base64url without padding (RFC 4648 §5), as JWTs use it; the in-memory backend adds the
/// encoding it mints with.
package enum Base64URL {
    /// Decodes unpadded or padded base64url; `nil` for anything else, such as the `+` and `/`
    /// of plain base64, or padding that is not at the end of a full group.
    package static func decode(_ text: Substring) -> Data? {
        let unpadded = text.count - text.reversed().prefix(while: { $0 == "=" }).count
        guard !text.prefix(unpadded).contains(where: { "+/=".contains($0) }),
            unpadded == text.count || text.count % 4 == 0, unpadded % 4 != 1
        else { return nil }
        var base64 = text.prefix(unpadded).replacingOccurrences(of: "-", with: "+")
        base64 = base64.replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - unpadded % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
