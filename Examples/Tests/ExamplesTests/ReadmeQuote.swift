import Foundation

/// Program output quoted in the repository's README.md: the fenced block whose first line
/// starts with a prefix, compared with what the program prints now once numbers (which vary
/// run to run) are masked.
struct ReadmeQuote {
    /// The quoted lines, as README shows them.
    let lines: [String]

    /// The first fenced block in README.md whose first line starts with `prefix`, or `nil`.
    init?(startingWith prefix: String) {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // ExamplesTests
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        guard let text = try? String(contentsOf: readme, encoding: .utf8) else { return nil }
        let blocks = text.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let found = blocks.map { $0.components(separatedBy: "\n").dropFirst() }.first {
            $0.first?.hasPrefix(prefix) == true
        }
        guard let found else { return nil }
        lines = Array(found)
    }

    /// The first line where `output` and the quote differ, numbers masked, or `nil`.
    func firstDifference(from output: String) -> String? {
        func masked(_ text: String) -> [String] {
            text.components(separatedBy: "\n").map {
                $0.replacingOccurrences(of: "[0-9]+(\\.[0-9]+)?", with: "N", options: .regularExpression)
                    .replacingOccurrences(of: " +$", with: "", options: .regularExpression)
            }.filter { !$0.isEmpty }
        }
        let printed = masked(output)
        let quoted = masked(lines.joined(separator: "\n"))
        for index in 0..<max(printed.count, quoted.count) {
            let said = index < quoted.count ? quoted[index] : "(nothing)"
            let now = index < printed.count ? printed[index] : "(nothing)"
            if said != now { return "README line \(index + 1): \(said)\nprinted now:   \(now)" }
        }
        return nil
    }
}
