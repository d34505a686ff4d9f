/// JSON text of the one shape the in-memory doubles write at every token and every update:
/// an object of strings, integers and objects of the same, keys in byte order, written
/// straight into bytes. `JSONSerialization` took about 0.4 ms a token on Linux (the
/// dictionary bridged to `NSDictionary`, each number boxed, the keys sorted with
/// locale-aware comparisons): a tenth of a 5,000-vehicle simulation's first minute.
/// The doubles keep `JSONSerialization` for objects of any other shape (a test's edited
/// claims).
package enum JSONText {
    /// A member's value.
    package enum Value {
        case string(String)
        case integer(Int64)
        case object([(key: String, value: Value)])
    }

    /// The object of `members`, keys in byte order; of members with the same key, the last
    /// (as a dictionary keeps the last value set).
    package static func object(_ members: [(key: String, value: Value)]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        appendObject(members, to: &bytes)
        return bytes
    }

    private static func appendObject(_ members: [(key: String, value: Value)], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        let kept = members.indices.filter { index in
            !members[(index + 1)...].contains { $0.key == members[index].key }
        }
        let sorted = kept.map { members[$0] }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for (index, member) in sorted.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(member.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            switch member.value {
            case .string(let text): appendString(text, to: &bytes)
            case .integer(let number): bytes.append(contentsOf: String(number).utf8)
            case .object(let members): appendObject(members, to: &bytes)
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `text` as a JSON string: a quote, a backslash and the control characters
    /// escaped as `JSONSerialization` escapes them, every other character as its UTF-8
    /// (a slash too, as with `.withoutEscapingSlashes`).
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Over contiguous bytes where the string has them: through its own view a byte at a time.
        if text.utf8.withContiguousStorageIfAvailable({ appendEscaped($0, to: &bytes) }) == nil {
            appendEscaped(Array(text.utf8), to: &bytes)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscaped(_ text: some Collection<UInt8>, to bytes: inout [UInt8]) {
        // IDs and claims rarely need escaping: the common case is one copy.
        guard text.contains(where: needsEscape) else { return bytes.append(contentsOf: text) }
        for byte in text {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
    }

    /// Whether a byte must be escaped in a JSON string: a control character, a quote or a
    /// backslash.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
