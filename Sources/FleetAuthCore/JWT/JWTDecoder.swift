import Foundation

/// Decodes the header and payload of a compact JWT (`header.payload.signature`).
///
/// It checks the shape, the base64url and the JSON, and reads the claims FleetAuth uses.
/// It does not verify the signature.
package enum JWTDecoder {
    /// The most bytes a token may have; anything longer is refused before decoding.
    package static let maximumTokenLength = 16 * 1024

    /// Decodes `token`, or throws `FleetAuthError` with code `malformedToken` naming the
    /// part that is wrong. The message never includes the token.
    package static func decode(_ token: String) throws(FleetAuthError) -> JWTClaims {
        guard token.utf8.count <= maximumTokenLength else {
            throw malformed("is longer than \(maximumTokenLength) bytes")
        }
        // Split on bytes: splitting the String by Character took half of the decoding.
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            .map { Substring($0) }
        guard parts.count == 3 else {
            throw malformed("has \(parts.count) dot-separated parts; a JWT has three (header.payload.signature)")
        }
        guard !parts[2].isEmpty else {
            throw malformed("has an empty signature; the backend must sign the token")
        }
        // Checked, never read: a space, a line break or any other byte there would break the
        // `Authorization` header that carries the token.
        guard Base64URL.isEncoded(parts[2]) else {
            throw malformed("has a signature that is not base64url")
        }
        return try claims(header: object(parts[0], part: "header"), payload: object(parts[1], part: "payload"))
    }

    private static func object(_ part: Substring, part name: String) throws(FleetAuthError) -> [String: Any] {
        guard let data = Base64URL.decode(part) else {
            throw malformed("has a \(name) that is not base64url")
        }
        guard let json = try? JSONSerialization.jsonObject(with: data, options: []),
            let object = json as? [String: Any]
        else {
            throw malformed("has a \(name) that is not a JSON object")
        }
        return object
    }

    private static func claims(header: [String: Any], payload: [String: Any]) throws(FleetAuthError) -> JWTClaims {
        var claims = JWTClaims()
        claims.algorithm = try string(header, "alg")
        claims.keyID = try string(header, "kid")
        claims.issuer = try string(payload, "iss")
        claims.subject = try string(payload, "sub")
        switch payload["aud"] {
        case nil, is NSNull: break
        case let single as String: claims.audience = [single]
        case let many as [Any]:
            claims.audience = try many.map { (element: Any) throws(FleetAuthError) -> String in
                guard let text = element as? String else { throw malformed("has a non-string entry in `aud`") }
                return text
            }
        default: throw malformed("has an `aud` claim that is neither a string nor a list of strings")
        }
        claims.issuedAt = try date(payload, "iat")
        claims.expiresAt = try date(payload, "exp")
        switch payload["authorization"] {
        case nil, is NSNull: break
        case let object as [String: Any]:
            for (key, value) in object {
                switch value {
                case let id as String: claims.authorization[key] = [id]
                case let ids as [Any]: claims.authorization[key] = ids.compactMap { $0 as? String }
                default: continue  // other private fields are not ours to judge
                }
            }
        default: throw malformed("has an `authorization` claim that is not a JSON object")
        }
        return claims
    }

    private static func string(_ object: [String: Any], _ key: String) throws(FleetAuthError) -> String? {
        switch object[key] {
        case nil, is NSNull: return nil
        case let text as String: return text
        default: throw malformed("has a `\(key)` that is not a string")
        }
    }

    /// NumericDate: seconds since 1970, finite, between 1970 and the year 10000.
    private static func date(_ object: [String: Any], _ key: String) throws(FleetAuthError) -> Date? {
        guard let raw = object[key], !(raw is NSNull) else { return nil }
        guard let number = JSONNumber.value(raw) else {
            throw malformed("has a `\(key)` claim that is not a number of seconds")
        }
        let seconds = number.doubleValue
        guard seconds.isFinite, seconds >= 0, seconds < 253_402_300_800 else {
            throw malformed("has a `\(key)` claim (\(seconds)) outside 1970…9999 in seconds")
        }
        return Date(timeIntervalSince1970: seconds)
    }

    private static func malformed(_ problem: String) -> FleetAuthError {
        FleetAuthError(
            reason: .malformedToken,
            message: "The token \(problem). Have the backend return the compact JWT it minted.")
    }
}
