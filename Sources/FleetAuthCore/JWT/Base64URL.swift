package import Foundation

/// Base64url without padding (RFC 4648 §5), as JWTs use it; the in-memory backend adds the
/// encoding it mints with.
package enum Base64URL {
    /// Decodes unpadded or padded base64url; `nil` for anything else, such as the `+` and `/`
    /// of plain base64, or padding that is not at the end of a full group.
    ///
    /// A table lookup per character: the fleet service double and every simulator decode
    /// each call's token, and going through plain base64 (`replacingOccurrences`, then
    /// `Data(base64Encoded:)`) took a fifth of a manual-clock simulation's time.
    package static func decode(_ text: Substring) -> Data? {
        let characters = Array(text.utf8)
        guard let end = unpaddedLength(characters) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end * 3 / 4)
        var pending: UInt32 = 0
        var pendingBits = 0
        for character in characters[..<end] {
            let value = sextets[Int(character)]
            guard value < 64 else { return nil }
            pending = (pending << 6 | UInt32(value)) & 0x3FFF
            pendingBits += 6
            if pendingBits >= 8 {
                pendingBits -= 8
                bytes.append(UInt8(truncatingIfNeeded: pending >> UInt32(pendingBits)))
            }
        }
        return Data(bytes)
    }

    /// Whether `text` is unpadded or padded base64url of at least one byte, as ``decode(_:)``
    /// would take it, without decoding it: for a JWT's signature, which FleetAuth checks but
    /// never reads.
    package static func isEncoded(_ text: Substring) -> Bool {
        let characters = Array(text.utf8)
        guard let end = unpaddedLength(characters), end > 0 else { return false }
        return characters[..<end].allSatisfy { sextets[Int($0)] < 64 }
    }

    /// The length of `characters` without its padding, or `nil` when the padding (at most two
    /// `=`, completing a group of four) or the length cannot be base64url's.
    private static func unpaddedLength(_ characters: [UInt8]) -> Int? {
        var end = characters.count
        while end > 0, characters[end - 1] == UInt8(ascii: "=") { end -= 1 }
        let padding = characters.count - end
        guard padding == 0 || (padding <= 2 && characters.count % 4 == 0), end % 4 != 1 else { return nil }
        return end
    }

    /// The base64url characters, by value.
    package static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of each base64url character, 255 for every other byte.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
