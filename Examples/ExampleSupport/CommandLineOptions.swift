public import FleetAuthCore

/// A small `--name value` / `--flag` parser, so the example needs no dependencies.
public struct CommandLineOptions {
    /// A bad command line, with the usage text to show.
    public struct UsageError: Error, CustomStringConvertible {
        public let message: String
        public var usage: String = ""
        public init(message: String, usage: String = "") {
            self.message = message
            self.usage = usage
        }
        public var description: String { usage.isEmpty ? message : "\(message)\n\n\(usage)" }
    }

    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `--name value` pairs and bare `--flag`s.
    public init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw UsageError(message: "unexpected argument \(argument)") }
            let name = String(argument.dropFirst(2))
            if index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
                values[name] = arguments[index + 1]
                index += 2
            } else {
                flags.insert(name)
                index += 1
            }
        }
    }

    /// The value given for `--name`, if any.
    public func value(_ name: String) -> String? { values[name] }
    /// Whether the bare flag `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The response-format preset with this command-line name.
    public static let formatNames =
        "token-only, swift-sample, objc-sample, jwt-expiration-timestamp, expiration-timestamp-ms, expires-in-seconds, plain"

    /// The preset named `name`.
    public static func format(named name: String) throws -> TokenResponseFormat {
        switch name {
        case "token-only": .tokenOnly
        case "swift-sample": .swiftSample()
        case "objc-sample": .objectiveCSample()
        case "jwt-expiration-timestamp": .jwtWithExpirationTimestamp
        case "expiration-timestamp-ms": .tokenWithExpirationTimestampMilliseconds
        case "expires-in-seconds": .tokenWithExpiresInSeconds
        case "plain": .plainText
        default: throw UsageError(message: "unknown format \(name)")
        }
    }
}
