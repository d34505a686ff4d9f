package import Foundation

/// The Python fixture `Fixtures/loopback_server.py`, started once per test process on a
/// free loopback port. It exits when this process ends (its standard input closes).
package final class LoopbackServer: Sendable {
    /// Why the fixture could not start.
    package struct StartFailure: Error, CustomStringConvertible {
        /// What went wrong, for the test report.
        package let description: String
    }

    /// The shared server, or why it could not start.
    package static let shared: Result<LoopbackServer, StartFailure> = Result { () throws(StartFailure) in
        try LoopbackServer()
    }

    /// The server, or a thrown error that fails the calling test with the reason.
    package static func running() throws -> LoopbackServer { try shared.get() }

    /// `http://127.0.0.1:PORT`.
    package let baseURL: URL
    /// The fixture's standard input, open for the life of this process.
    private let input: Pipe

    private init() throws(StartFailure) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/loopback_server.py")
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
        self.input = input
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!
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
            do {
                try process.run()
            } catch {
                throw StartFailure(description: "could not start python3 \(script.path): \(error)")
            }
        #endif
    }

    /// `http://127.0.0.1:PORT` + `path`.
    package func url(_ path: String) -> String { baseURL.absoluteString + path }

    /// A counter key no other test uses, for the fixture's per-key failure scripts.
    package static func uniqueKey(_ name: String = #function) -> String {
        "\(name.prefix(while: { $0 != "(" }))-\(UUID().uuidString.prefix(8))"
    }

    /// Stores an answer that the fixture then replays byte for byte, and returns its URL.
    package func scriptedURL(status: Int, headers: [String: String] = [:], body: Data = Data()) async throws
        -> String
    {
        let script = try JSONSerialization.data(withJSONObject: [
            "status": status, "headers": headers, "body": body.base64EncodedString(),
        ])
        var request = URLRequest(url: URL(string: url("/scripted"))!)
        request.httpMethod = "POST"
        request.httpBody = script
        let (data, _) = try await URLSession.shared.asyncData(for: request)
        guard let id = (try JSONSerialization.jsonObject(with: data) as? [String: Int])?["id"] else {
            throw StartFailure(description: "the fixture did not store the scripted answer")
        }
        return url("/scripted/\(id)")
    }

    /// `https://127.0.0.1:PORT` + `path` on the fixture's TLS listener, whose self-signed
    /// certificate no device trusts.
    package func untrustedTLSURL(_ path: String) async throws -> String {
        let (data, _) = try await URLSession.shared.asyncData(from: URL(string: url("/fixture/tls-port"))!)
        guard let port = (try JSONSerialization.jsonObject(with: data) as? [String: Int])?["port"], port > 0 else {
            throw StartFailure(description: "the fixture has no TLS listener")
        }
        return "https://127.0.0.1:\(port)" + path
    }

    /// How many requests the fixture has seen for `key`.
    package func requestCount(key: String) async throws -> Int {
        let (data, _) = try await URLSession.shared.asyncData(from: URL(string: url("/stats"))!)
        let counts = try JSONSerialization.jsonObject(with: data) as? [String: Int] ?? [:]
        return counts[key] ?? 0
    }
}

#if canImport(FoundationNetworking)
    package import FoundationNetworking
#endif

extension URLSession {
    /// `data(for:)` that also exists on Linux.
    package func asyncData(for request: URLRequest) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            dataTask(with: request) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                continuation.resume(returning: (data ?? Data(), response!))
            }.resume()
        }
    }

    /// `data(from:)` that also exists on Linux.
    package func asyncData(from url: URL) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            dataTask(with: url) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                continuation.resume(returning: (data ?? Data(), response!))
            }.resume()
        }
    }
}
