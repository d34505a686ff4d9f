package import Foundation

/// Base64url without padding (RFC 4648 §5), as JWTs use it. Shared by FleetAuth's modules.
///
/// Decoding works on UTF-8 bytes through a lookup table: no intermediate strings.
package enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    package static func encode(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes unpadded or padded base64url; `nil` for anything else.
    package static func decode(_ text: Substring) -> Data? {
        var text = text
        return text.withUTF8 { decode($0) }
    }

    /// Decodes the base64url in `bytes` (padding allowed only at the end); `nil` for
    /// anything else.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        var count = bytes.count
        var padding = 0
        while count > 0, padding < 2, bytes[count - 1] == UInt8(ascii: "=") {
            count -= 1
            padding += 1
        }
        if padding > 0, (count + padding) % 4 != 0 { return nil }
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        var output = Data(count: count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1))
        let valid = output.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Bool in
            decode(bytes.prefix(count), into: raw)
        }
        return valid ? output : nil
    }

    private static func decode(_ input: Slice<UnsafeBufferPointer<UInt8>>, into output: UnsafeMutableRawBufferPointer)
        -> Bool
    {
        table.withUnsafeBufferPointer { table in
            var accumulator: UInt32 = 0
            var bits = 0
            var written = 0
            for byte in input {
                let value = table[Int(byte)]
                guard value != 0xFF else { return false }
                accumulator = (accumulator << 6) | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    output[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                    written += 1
                }
            }
            return written == output.count
        }
    }

    /// The 6-bit value of each base64url byte; 0xFF for bytes outside the alphabet.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()
}
