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

    /// The short names of the response-format presets.
    public static let formatNames = TokenResponseFormat.presetNames.map(\.name).joined(separator: ", ")

    /// The preset named `name`.
    public static func format(named name: String) throws -> TokenResponseFormat {
        guard let format = TokenResponseFormat.preset(named: name) else {
            throw UsageError(message: "unknown format \(name); use one of \(formatNames)")
        }
        return format
    }
}
