import FleetAuthTestSupport
import Foundation
import Testing

/// Code that only Apple platforms compile is code nobody here compiles: the library keeps it
/// to the lines "What the provider does" counts, each under a condition that says what is
/// meant, and the tests build for every Apple platform.
@Suite("Platform branches", .timeLimit(.minutes(1)))
struct PlatformBranchesTests {
    /// The Swift files under `folder`, by their path from the repository's root.
    static func swiftFiles(under folder: String) -> [(path: String, lines: [String])] {
        let root = ReadmeSample.repositoryURL
        let found = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path)?.allObjects ?? []
        return found.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { file in
            let text =
                (try? String(contentsOf: root.appendingPathComponent("\(folder)/\(file)"), encoding: .utf8)) ?? ""
            return (
                "\(folder)/\(file)",
                text.split(separator: "\n", omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
            )
        }
    }

    /// The lines each file compiles only on Apple platforms: the `#else` of
    /// `canImport(FoundationNetworking)`, the body of `canImport(Darwin)`. Any other
    /// condition is recorded as an issue: `#if os(Linux) … #else` also catches Android and
    /// Windows.
    static func appleOnlyLines(of file: (path: String, lines: [String])) -> [String] {
        var appleOnly: [String] = []
        var condition: String?
        var inAppleBranch = false
        for line in file.lines {
            if line.hasPrefix("#if ") {
                condition = String(line.dropFirst(4))
                if !["canImport(FoundationNetworking)", "canImport(Darwin)"].contains(condition) {
                    Issue.record("\(file.path): `\(line)` does not say plainly which systems it means")
                }
                inAppleBranch = condition == "canImport(Darwin)"
            } else if line == "#else" {
                inAppleBranch = condition == "canImport(FoundationNetworking)"
            } else if line.hasPrefix("#endif") {
                (condition, inAppleBranch) = (nil, false)
            } else if inAppleBranch && !line.isEmpty && !line.hasPrefix("//") {
                appleOnly.append(line)
            }
        }
        return appleOnly
    }

    @Test func theLibraryKeepsAppleOnlyCodeToTheLinesTheArticleCounts() throws {
        let files = Self.swiftFiles(under: "Sources").map { ($0.path, Self.appleOnlyLines(of: $0)) }
            .filter { !$0.1.isEmpty }
        let count = files.map(\.1.count).reduce(0, +)
        let article = try String(
            contentsOf: ReadmeSample.document("Sources/FleetAuthCore/Documentation.docc/WhatTheProviderDoes.md"),
            encoding: .utf8)
        #expect(
            article.contains("compile to \(count) lines"),
            "the library compiles \(count) lines only on Apple platforms: \(files.map { "\($0.0): \($0.1.count)" })")
        // The boot clock's read is one of them; nothing else in Core is.
        let core = files.filter { $0.0.hasPrefix("Sources/FleetAuthCore/") }
        #expect(core.map(\.0) == ["Sources/FleetAuthCore/Clock/WallClock.swift"])
        #expect(core.first?.1 == ["clock_gettime(CLOCK_MONOTONIC, &spec)"])
    }

    /// `Process` does not exist on iOS, tvOS, watchOS or visionOS: the tests' fixtures start
    /// python3 only where it does, so an app team's test build for a simulator compiles.
    @Test func theTestsStartAProcessOnlyWhereOneCanBeStarted() {
        let guardLine = "#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)"
        let start = "Process" + "()"  // spelled so that this file does not name it
        for file in Self.swiftFiles(under: "Tests") + Self.swiftFiles(under: "Examples/Tests") {
            var guarded = false
            for line in file.lines {
                if line == guardLine { guarded = true } else if line.hasPrefix("#endif") { guarded = false }
                if line.contains(start) { #expect(guarded, "\(file.path): \(line)") }
            }
        }
    }
}
