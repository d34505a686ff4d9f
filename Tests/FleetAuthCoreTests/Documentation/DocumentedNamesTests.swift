import FleetAuthCore
import FleetAuthTestSupport
import Foundation
import Testing

/// The documents agree with the code where they list what the code defines: a paragraph that
/// lists most token-state phases or event kinds lists them all, and no example counts a
/// recording that keeps only the latest 10,000 entries.
@Suite("Documents list what the code defines", .timeLimit(.minutes(1)))
struct DocumentedNamesTests {
    /// Every token-state phase and event kind, read off their declarations.
    static let phases = declaredNames(in: "Sources/FleetAuthCore/Observation/TokenState.swift", of: "Phase")
    static let kinds = declaredNames(in: "Sources/FleetAuthCore/Observation/TokenEventKind.swift", of: "Kind")

    /// The names of `public static let name = Type(` declarations in a source file.
    static func declaredNames(in path: String, of type: String) -> Set<String> {
        let source = (try? String(contentsOf: ReadmeSample.document(path), encoding: .utf8)) ?? ""
        let pattern = try! NSRegularExpression(pattern: "public static let (\\w+) = \(type)\\(")
        let range = NSRange(source.startIndex..., in: source)
        return Set(
            pattern.matches(in: source, range: range).compactMap {
                Range($0.range(at: 1), in: source).map { String(source[$0]) }
            })
    }

    /// README, CHANGELOG, the catalogs' articles and the doc comments of Sources, each cut into
    /// paragraphs of prose (code blocks left out) and its Swift blocks.
    static func documents() throws -> [(path: String, paragraphs: [String], swiftBlocks: [String])] {
        let root = ReadmeSample.repositoryURL
        var paths = ["README.md", "CHANGELOG.md"]
        let sources = root.appendingPathComponent("Sources").path
        for case let file as String in FileManager.default.enumerator(atPath: sources)?.allObjects ?? []
        where file.hasSuffix(".md") || file.hasSuffix(".swift") {
            paths.append("Sources/" + file)
        }
        return try paths.sorted().map { path in
            var lines = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if path.hasSuffix(".swift") {
                // Doc comments only; a blank line between comments ends a paragraph.
                lines = lines.map { $0.trimmingCharacters(in: .whitespaces) }
                    .map { $0.hasPrefix("///") ? String($0.dropFirst(3)) : "" }
            }
            var paragraphs: [String] = []
            var blocks: [String] = []
            var current: [String] = []
            var block: [String]?  // the lines of the fenced block being read
            var blockIsSwift = false
            for line in lines + [""] {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("```") {
                    if let code = block {
                        if blockIsSwift { blocks.append(code.joined(separator: "\n")) }
                        block = nil
                    } else {
                        block = []
                        blockIsSwift = trimmed == "```swift"
                    }
                } else if block != nil {
                    block?.append(line)
                } else if trimmed.isEmpty {
                    if !current.isEmpty { paragraphs.append(current.joined(separator: " ")) }
                    current = []
                } else {
                    current.append(trimmed)
                }
            }
            return (path, paragraphs, blocks)
        }
    }

    /// The names in backticks of a paragraph that are among `names`.
    static func named(_ names: Set<String>, in paragraph: String) -> Set<String> {
        let quoted = paragraph.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .compactMap { $0.offset % 2 == 1 ? String($0.element) : nil }
        return Set(quoted.map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }).intersection(names)
    }

    /// README stays one page: what does not fit goes to the guides it links.
    @Test func theReadmeIsOnePage() throws {
        let readme = try String(contentsOf: ReadmeSample.document("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(lines <= 200, "README.md has \(lines) lines; move the rest to a guide")
    }

    /// README, its manifest excerpt and the documentation's landing page name the latest
    /// release the changelog dates, so the docs say which version they describe.
    @Test func theDocsNameTheLatestRelease() throws {
        func text(_ path: String) throws -> String {
            try String(contentsOf: ReadmeSample.document(path), encoding: .utf8)
        }
        let changelog = try text("CHANGELOG.md")
        let released = try #require(changelog.firstMatch(of: /\n## (\d+\.\d+\.\d+) — \d{4}-\d{2}-\d{2}/))
        let version = String(released.1)
        let readme = try text("README.md")
        let landing = try text("Documentation/FleetAuth.docc/FleetAuth.md")
        let installNamesIt = readme.contains("These docs describe FleetAuth \(version)")
        let manifestDependsOnIt = readme.contains("from: \"\(version)\"")
        let landingNamesIt = landing.contains("describes FleetAuth \(version)")
        #expect(installNamesIt, "README's Install names another version than \(version)")
        #expect(manifestDependsOnIt, "README's manifest excerpt depends on another version than \(version)")
        #expect(landingNamesIt, "the landing page names another version than \(version)")
    }

    @Test func theDeclarationsAreRead() {
        #expect(Self.phases.isSuperset(of: ["noToken", "fresh", "refreshing", "refreshRefused", "signedOut"]))
        #expect(Self.kinds.isSuperset(of: ["servedFresh", "fetchRetried", "rejected", "evictedUsable", "signedOut"]))
    }

    /// A paragraph naming five phases or more lists the states a screen can show, and one
    /// naming eight kinds or more what a dashboard counts: all of them.
    @Test(arguments: [("phases", 5), ("kinds", 8)])
    func aParagraphThatListsMostNamesListsThemAll(names label: String, from threshold: Int) throws {
        let all = label == "phases" ? Self.phases : Self.kinds
        for document in try Self.documents() {
            for paragraph in document.paragraphs {
                let named = Self.named(all, in: paragraph)
                guard named.count >= threshold else { continue }
                #expect(
                    named == all,
                    "\(document.path) lists \(label) without \(all.subtracting(named).sorted()): \(paragraph.prefix(160))…"
                )
            }
        }
    }

    /// The in-memory doubles keep their latest 10,000 entries: an example that counts them
    /// reads 10,000 in a long test. Examples count with `requestCount`, `acceptedCount`,
    /// `rejectedCount` and `mintedCount`.
    @Test func noExampleCountsARecordingThatKeepsTheLatestEntries() throws {
        let counting = try NSRegularExpression(
            pattern: "\\b(requests|calls|issuedTokens)(\\.filter\\s*(\\([^)]*\\)|\\{[^}]*\\}))?\\.count\\b")
        for document in try Self.documents() {
            for block in document.swiftBlocks {
                let found = counting.firstMatch(in: block, range: NSRange(block.startIndex..., in: block))
                #expect(found == nil, "\(document.path): \(block.prefix(120))…")
            }
        }
    }
}
