import Foundation

extension TokenResponseFormat {
    /// A ready-made shape, as `fleetauth check-endpoint --format` and Swift name it.
    package typealias Preset = (name: String, swift: String, format: TokenResponseFormat)

    /// Every ready-made shape, in the order the checker tries them.
    package static let presets: [TokenResponseFormat] = presetNames.map(\.format)

    /// The presets as `--format` and Swift name them.
    package static let presetNames: [Preset] = [
        ("token-only", ".tokenOnly", .tokenOnly), ("swift-sample", ".swiftSample()", .swiftSample()),
        ("objc-sample", ".objectiveCSample()", .objectiveCSample()),
        ("jwt-expiration-timestamp", ".jwtWithExpirationTimestamp", .jwtWithExpirationTimestamp),
        (
            "expiration-timestamp-ms", ".tokenWithExpirationTimestampMilliseconds",
            .tokenWithExpirationTimestampMilliseconds
        ),
        ("expires-in-seconds", ".tokenWithExpiresInSeconds", .tokenWithExpiresInSeconds),
        ("plain", ".plainText", .plainText),
    ]

    /// The preset with the short name `name`, or `nil`.
    package static func preset(named name: String) -> TokenResponseFormat? {
        presetNames.first { $0.name == name }?.format
    }

    /// The preset whose keys `object` holds (a string under its token key and a number under
    /// its expiry key), one stating an expiry first; `nil` when none does.
    package static func preset(readingKeysOf object: [String: Any]) -> Preset? {
        let readable = presetNames.filter { preset in
            guard case .json(let tokenKey, let expiry) = preset.format.body, object[tokenKey] is String else {
                return false
            }
            return expiry.map { JSONNumber.value(object[$0.key] as Any) != nil } ?? true
        }
        return readable.first { if case .json(_, _?) = $0.format.body { true } else { false } } ?? readable.first
    }
}

extension TokenResponseFormat {
    /// How `fleetauth check-endpoint` flags and Swift name this format: a preset by its name,
    /// any other by its keys and unit.
    package var spelling: (flags: String, swift: String) {
        if let preset = Self.presetNames.first(where: { $0.format == self }) {
            return ("--format \(preset.name)", preset.swift)
        }
        guard case .json(let tokenKey, let expiry) = body else { return ("--format plain", ".plainText") }
        guard let expiry else {
            return ("--token-key \(tokenKey)", ".json(tokenKey: \"\(tokenKey)\")")
        }
        let (flag, swiftUnit) =
            switch expiry.unit.value {
            case .absoluteSeconds: ("seconds", ".absoluteSeconds")
            case .absoluteMilliseconds: ("milliseconds", ".absoluteMilliseconds")
            case .secondsFromNow: ("seconds-from-now", ".secondsFromNow")
            }
        return (
            "--token-key \(tokenKey) --expiry-key \(expiry.key) --expiry-unit \(flag)",
            ".json(tokenKey: \"\(tokenKey)\", expiryKey: \"\(expiry.key)\", expiryUnit: \(swiftUnit))"
        )
    }

    /// This format with its expiry read in `unit` instead.
    package func reading(expiryIn unit: ExpiryUnit) -> TokenResponseFormat {
        guard case .json(let tokenKey, let field?) = body else { return self }
        let format = TokenResponseFormat.json(tokenKey: tokenKey, expiry: ExpiryField(key: field.key, unit: unit))
        return Self.presetNames.first { $0.format.body == format.body }?.format ?? format
    }
}
