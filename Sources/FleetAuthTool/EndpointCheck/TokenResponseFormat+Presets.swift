package import FleetAuthCore

extension TokenResponseFormat {
    /// Every ready-made shape, in the order the checker tries them.
    package static let presets: [TokenResponseFormat] = presetNames.map(\.format)

    /// The presets as `--format` and Swift name them.
    package static let presetNames: [(name: String, swift: String, format: TokenResponseFormat)] = [
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
}
