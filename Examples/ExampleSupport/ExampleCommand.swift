import Foundation

/// The shared `main` of the example apps: `--help` prints the usage; `--token-url` runs
/// against real services; otherwise the embedded simulation runs, with a progress line on
/// standard error when it is a terminal and its report on standard output.
///
/// Exit status: 0 when everything succeeded, 1 when anything failed, 2 for a usage error.
public enum ExampleCommand {
    /// Runs one example app. `real` returns whether every call it made succeeded; options
    /// other than `embeddedNames` are for real-service mode and are refused without `--token-url`.
    public static func main(
        name: String, usage: String, valueNames: Set<String>, embeddedNames: Set<String>,
        real: @Sendable (_ tokenURL: String, _ arguments: CommandLineOptions) async throws -> Bool,
        embedded:
            @Sendable (_ arguments: CommandLineOptions, _ progress: @escaping @Sendable (String) -> Void) async throws
            -> any CustomStringConvertible
    ) async {
        await runAndExit(name: name) {
            let arguments = try CommandLineOptions(Array(CommandLine.arguments.dropFirst()), valueNames: valueNames)
            if arguments.flag("help") {
                print(usage)
                return 0
            } else if let tokenURL = arguments.value("token-url") {
                return try await real(tokenURL, arguments) ? 0 : 1
            } else if let stray = arguments.givenNames.subtracting(embeddedNames).sorted().first {
                throw CommandLineOptions.UsageError(message: "--\(stray) applies only with --token-url")
            } else {
                let terminal = isatty(STDERR_FILENO) != 0
                let report = try await embedded(arguments) { line in
                    if terminal { FileHandle.standardError.write(Data("\r\(line)".utf8)) }
                }
                if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
                print(report)
                return 0
            }
        }
    }

    /// Runs `body` and exits with the status it returns: 2 after a usage error (with a pointer
    /// to `--help`), 1 after any other error, both written to standard error as `name: …`.
    nonisolated(nonsending) public static func runAndExit(name: String, _ body: () async throws -> Int32) async -> Never
    {
        let status: Int32
        do {
            status = try await body()
        } catch let error as CommandLineOptions.UsageError {
            FileHandle.standardError.write(Data("\(name): \(error.message)\nRun `\(name) --help` for usage.\n".utf8))
            status = 2
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            status = 1
        }
        exit(status)
    }
}
