import Foundation

/// The repository's loopback HTTP fixture (`Tests/FleetAuthTestSupport/Fixtures/loopback_server.py`),
/// started once per test process on a free port; it exits when this process ends (its
/// standard input closes).
final class LoopbackFixture: Sendable {
    /// Why the fixture could not start.
    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// The shared fixture, or why it could not start.
    static let shared = Result { () throws(StartFailure) in try LoopbackFixture() }

    /// `http://127.0.0.1:PORT`.
    let baseURL: String
    /// The fixture's standard input, open for the life of this process.
    private let input: Pipe

    private init() throws(StartFailure) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // ExamplesTests
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/FleetAuthTestSupport/Fixtures/loopback_server.py")
        let input = Pipe()
        let output = Pipe()
        try Self.start(script, input: input, output: output)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw StartFailure(description: "the fixture exited before printing its port") }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            throw StartFailure(description: "unexpected fixture output: \(text)")
        }
        (self.input, baseURL) = (input, "http://127.0.0.1:\(port)")
    }

    /// Runs `python3 script` with the pipes as its standard input and output. iOS, tvOS,
    /// watchOS and visionOS start no other process: there the tests that need the fixture
    /// fail with this reason, and the rest build and run.
    private static func start(_ script: URL, input: Pipe, output: Pipe) throws(StartFailure) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            throw StartFailure(description: "the loopback fixture runs python3, and this system starts no process")
        #else
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script.path]
            process.standardInput = input
            process.standardOutput = output
            do { try process.run() } catch {
                throw StartFailure(description: "could not start python3 \(script.path): \(error)")
            }
        #endif
    }
}
