public import FleetAuthCore
import Foundation

/// A small `--name value` / `--flag` parser, so the examples need no dependencies.
public struct CommandLineOptions {
    /// A bad command line: the examples exit with status 2 and point at `--help`.
    public struct UsageError: Error, CustomStringConvertible {
        /// What is wrong, in one line.
        public let message: String
        /// Creates an error.
        public init(message: String) {
            self.message = message
        }
        /// The message.
        public var description: String { message }
    }

    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `--name value` pairs for the names in `valueNames` (repeatable) and bare
    /// `--flag`s for those in `flagNames`; anything else is a ``UsageError``.
    public init(_ arguments: [String], valueNames: Set<String>, flagNames: Set<String> = ["help"]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw UsageError(message: "unexpected argument \(argument)") }
            let name = String(argument.dropFirst(2))
            if flagNames.contains(name) {
                flags.insert(name)
                index += 1
            } else if valueNames.contains(name) {
                guard index + 1 < arguments.count else { throw UsageError(message: "\(argument) needs a value") }
                values[name, default: []].append(arguments[index + 1])
                index += 2
            } else {
                let known = valueNames.union(flagNames)
                let close = Self.nearest(to: name, among: known).map { "; did you mean --\($0)?" } ?? ""
                throw UsageError(message: "unknown option \(argument)\(close)")
            }
        }
    }

    /// The known name closest to a mistyped `name`: one it starts or one that starts it,
    /// else one at most two edits away; `nil` when none is that close.
    static func nearest(to name: String, among known: Set<String>) -> String? {
        let sorted = known.sorted()
        if let prefixed = sorted.first(where: { $0.hasPrefix(name) || name.hasPrefix($0) }) { return prefixed }
        func edits(_ a: [Character], _ b: [Character]) -> Int {
            var row = Array(0...b.count)
            for (i, x) in a.enumerated() {
                var next = [i + 1]
                for (j, y) in b.enumerated() {
                    next.append(min(row[j] + (x == y ? 0 : 1), row[j + 1] + 1, next[j] + 1))
                }
                row = next
            }
            return row[b.count]
        }
        let best = sorted.map { ($0, edits(Array(name), Array($0))) }.min { $0.1 < $1.1 }
        return best.flatMap { $0.1 <= 2 ? $0.0 : nil }
    }

    /// The token endpoint at `url` as `--format` (default `defaultFormat`), `--header` and
    /// `--timeout` (seconds each attempt may take; default 15) describe it.
    public func endpoint(url: String, defaultFormat: TokenResponseFormat = .tokenOnly) throws -> TokenEndpoint {
        let headers = try headers()  // the app's credential; never printed
        return TokenEndpoint(
            url: url, format: try format(default: defaultFormat), headers: { _ in headers },
            timeout: try number("timeout") ?? 15)
    }

    /// The last value given for `--name`, if any.
    public func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for `--name`, in order.
    public func values(_ name: String) -> [String] { values[name] ?? [] }
    /// Whether the bare flag `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }
    /// The names of every option and flag given, without the dashes.
    public var givenNames: Set<String> { flags.union(values.keys) }

    /// The value of `--name` as a positive number; `nil` when not given.
    public func number(_ name: String) throws -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite, number > 0 else {
            throw UsageError(message: "--\(name) needs a positive number, not \(text)")
        }
        return number
    }

    /// The `--header 'Name: value'` options as a dictionary. Values are never printed.
    public func headers() throws -> [String: String] {
        var headers: [String: String] = [:]
        for header in values("header") {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw UsageError(message: "--header needs 'Name: value'")
            }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            headers[name] = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    /// The token rules for `fleet`, with `--audience AUD|none` (default: the fleet service's).
    public func rules(fleet: FleetFlavor = .onDemand) -> TokenRules {
        switch value("audience") {
        case nil: TokenRules(fleet: fleet)
        case "none": TokenRules(expectedAudience: nil, fleet: fleet)
        case let audience: TokenRules(expectedAudience: audience, fleet: fleet)
        }
    }

    /// The level named by `--log-level` (default `info`): the token events written to
    /// standard error by `TokenEventLogger`.
    public func logLevel() throws -> TokenEventLevel {
        guard let name = value("log-level") else { return .info }
        guard let level = TokenEventLevel.allCases.first(where: { "\($0)" == name }) else {
            let names = TokenEventLevel.allCases.map { "\($0)" }.joined(separator: ", ")
            throw UsageError(message: "--log-level takes one of \(names), not \(name)")
        }
        return level
    }

    /// The response formats `--format` names.
    public static let formats: KeyValuePairs<String, TokenResponseFormat> = [
        "token-only": .tokenOnly, "swift-sample": .swiftSample(), "objc-sample": .objectiveCSample(),
        "jwt-expiration-timestamp": .jwtWithExpirationTimestamp,
        "expiration-timestamp-ms": .tokenWithExpirationTimestampMilliseconds,
        "expires-in-seconds": .tokenWithExpiresInSeconds, "plain": .plainText,
    ]

    /// The names `--format` takes.
    public static let formatNames = formats.map(\.key).joined(separator: ", ")

    /// The preset named by `--format`, or `defaultFormat`.
    public func format(default defaultFormat: TokenResponseFormat = .tokenOnly) throws -> TokenResponseFormat {
        guard let name = value("format") else { return defaultFormat }
        return try Self.format(named: name)
    }

    /// The preset named `name`.
    public static func format(named name: String) throws -> TokenResponseFormat {
        guard let format = formats.first(where: { $0.key == name })?.value else {
            throw UsageError(message: "unknown format \(name); use one of \(formatNames)")
        }
        return format
    }
}
