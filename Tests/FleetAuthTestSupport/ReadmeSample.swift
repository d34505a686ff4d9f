package import Foundation

/// A sample of program output quoted in README.md, for tests that keep it true: the fenced
/// block whose first line starts with a given prefix, compared with what the program prints
/// now after both are normalized (numbers, ports, dates and fingerprints vary run to run).
package struct ReadmeSample {
    /// The quoted lines, as README shows them.
    package let lines: [String]

    /// The first fenced block in README.md whose first line starts with `prefix`, or `nil`.
    package init?(startingWith prefix: String, readme: URL = ReadmeSample.readmeURL) {
        guard let text = try? String(contentsOf: readme, encoding: .utf8) else { return nil }
        var block: [String]?
        for line in text.components(separatedBy: "\n") {
            if var current = block {
                if line.hasPrefix("```") {
                    if current.first?.hasPrefix(prefix) == true {
                        lines = current
                        return
                    }
                    block = nil
                } else {
                    current.append(line)
                    block = current
                }
            } else if line.hasPrefix("```") {
                block = []
            }
        }
        return nil
    }

    /// The root of this repository.
    package static let repositoryURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// README.md at the root of this repository.
    package static let readmeURL = repositoryURL.appendingPathComponent("README.md")

    /// A document of this repository, by its path from the root.
    package static func document(_ path: String) -> URL {
        repositoryURL.appendingPathComponent(path)
    }

    /// `line` with what varies between runs replaced: fingerprints, dates, and every number.
    package static func normalized(_ line: String) -> String {
        var line = line
        let patterns = [
            ("tok_[0-9a-f]{8}", "tok_X"),
            ("[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT", "DATE"),
            ("[0-9]+(\\.[0-9]+)?", "N"),
            (" +$", ""),
        ]
        for (pattern, replacement) in patterns {
            line = line.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return line
    }

    /// The first line where `output` and the sample differ after normalizing, or `nil` when
    /// they agree line for line.
    package func firstDifference(from output: String) -> String? {
        let actual = output.components(separatedBy: "\n").map(Self.normalized).filter { !$0.isEmpty }
        let quoted = lines.map(Self.normalized).filter { !$0.isEmpty }
        for index in 0..<max(actual.count, quoted.count) {
            let said = index < quoted.count ? quoted[index] : "(nothing)"
            let printed = index < actual.count ? actual[index] : "(nothing)"
            if said != printed { return "README line \(index + 1): \(said)\nprinted now:   \(printed)" }
        }
        return nil
    }
}
