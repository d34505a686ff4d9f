package import FleetAuthCore

extension TokenResponseFormat {
    /// Every ready-made shape, in the order the checker tries them.
    package static let presets: [TokenResponseFormat] = presetNames.map(\.format)

    /// Short names for the presets, as `--format` spells them.
    package static let presetNames: [(name: String, format: TokenResponseFormat)] = [
        ("token-only", .tokenOnly), ("swift-sample", .swiftSample()), ("objc-sample", .objectiveCSample()),
        ("jwt-expiration-timestamp", .jwtWithExpirationTimestamp),
        ("expiration-timestamp-ms", .tokenWithExpirationTimestampMilliseconds),
        ("expires-in-seconds", .tokenWithExpiresInSeconds), ("plain", .plainText),
    ]

    /// The preset with the short name `name`, or `nil`.
    package static func preset(named name: String) -> TokenResponseFormat? {
        presetNames.first { $0.name == name }?.format
    }
}
