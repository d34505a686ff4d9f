import Foundation

/// Text from outside (an ID, a claim, a header a backend sent) made safe to put on one line of
/// a log, a description or the checker's output.
extension String {
    /// The text with every control character escaped (`\r`, `\n`, `\t`, `\u{1B}`), and the
    /// Unicode line and paragraph separators and bidirectional overrides with it, so that no
    /// value can start a forged log line or reorder what a reader sees. Text without any is
    /// returned as it is.
    package var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.needsEscape) else { return self }
        var escaped = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\r": escaped += "\\r"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case _ where Self.needsEscape(scalar):
                escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return true }
        switch scalar.value {
        case 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}

extension String {
    /// The text with every value of `sentValues` (header values a request carried) shown as
    /// `<hidden>`, with the credential after an authentication scheme (`Bearer …`, `Basic …`)
    /// and a Basic credential's decoded `user:password` and its parts hidden on their own:
    /// for text a backend chose (a claim, a redirect's target), which may echo what it was
    /// sent. A value or credential shorter than 4 characters, and a decoded user name or
    /// password shorter than 8, is left, so that ordinary words of a message survive.
    package func hiding(_ sentValues: some Sequence<String>) -> String {
        var secrets = Set<String>()
        for value in sentValues {
            secrets.insert(value)
            guard let space = value.firstIndex(of: " ") else { continue }
            let credential = String(value[value.index(after: space)...]).trimmingCharacters(in: .whitespaces)
            secrets.insert(credential)
            if value[..<space].lowercased() == "basic", let decoded = Data(base64Encoded: credential),
                let pair = String(data: decoded, encoding: .utf8)
            {
                secrets.insert(pair)
                secrets.formUnion(pair.split(separator: ":", maxSplits: 1).map(String.init).filter { $0.count >= 8 })
            }
        }
        var text = self
        // Longest first, so that a credential inside a longer value is hidden whole.
        for secret in secrets.filter({ $0.count >= 4 }).sorted(by: { $0.count > $1.count }) where text.contains(secret)
        {
            text = text.replacingOccurrences(of: secret, with: "<hidden>")
        }
        return text
    }
}
