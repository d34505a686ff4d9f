import Foundation

/// The shared `main` of the example apps: `--help` prints the usage; `--token-url` runs
/// against real services; otherwise the embedded simulation runs with a progress line on
/// standard error and its report on standard output. Errors exit with status 1.
public enum ExampleCommand {
    /// Runs one example app.
    public static func main(
        name: String, usage: String,
        real: @Sendable (_ tokenURL: String, _ arguments: CommandLineOptions) async throws -> Void,
        embedded:
            @Sendable (_ arguments: CommandLineOptions, _ progress: @escaping @Sendable (String) -> Void) async throws
            -> any CustomStringConvertible
    ) async {
        do {
            let arguments = try CommandLineOptions(Array(CommandLine.arguments.dropFirst()))
            if arguments.flag("help") {
                print(usage)
            } else if let tokenURL = arguments.value("token-url") {
                try await real(tokenURL, arguments)
            } else {
                let report = try await embedded(arguments) { line in
                    FileHandle.standardError.write(Data("\r\(line)".utf8))
                }
                FileHandle.standardError.write(Data("\n".utf8))
                print(report)
            }
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            exit(1)
        }
    }
}
