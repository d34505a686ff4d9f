import FleetAuthTestSupport
import Foundation
import Testing

/// The package declares macOS 13 and iOS 16; the manual clock's `settle()`,
/// `runToCompletion` and `run(until:)` need task executors (macOS 15, iOS 18). The compiler
/// here ignores `@available`, so this reading stands in for a Mac's first build.
@Suite("Calls that need task executors", .timeLimit(.minutes(1)))
struct NewerOSCallsTests {
    /// The package's own files: the library and its tests.
    static let packageFiles =
        PlatformBranchesTests.swiftFiles(under: "Sources")
        + PlatformBranchesTests.swiftFiles(under: "Tests")

    @Test func everyUseInThePackageIsMarkedOrChecked() {
        let declared = NewerOSCalls.declaredNames(in: Self.packageFiles)
        let names = declared.everywhere.union(NewerOSCalls.standardLibraryNames)
        #expect(names.isSuperset(of: ["runToCompletion(", "settle(", "run(until:", "taskExecutor", "settled("]))
        let uncovered = Self.packageFiles.flatMap { file in
            NewerOSCalls.uncovered(in: file, names: names.union(declared.inFile[file.path] ?? []))
        }
        #expect(uncovered.isEmpty, "\(uncovered.count) uses:\n\(uncovered.map(\.description).joined(separator: "\n"))")
    }

    /// The examples and benchmarks are packages of their own that drive the manual clock
    /// throughout: they declare the platforms that have task executors.
    @Test(arguments: ["Examples/Package.swift", "Benchmarks/Package.swift"])
    func aPackageThatDrivesTheClockDeclaresTheNewerPlatforms(manifest: String) throws {
        let text = try String(contentsOf: ReadmeSample.document(manifest), encoding: .utf8)
        #expect(text.contains("platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)]"))
    }

    /// The reading itself: a call outside a marked declaration is found; one inside it, on
    /// its own lines, or in an `if #available` is not; a string or a comment does not count.
    @Test func theReadingFindsAnUnmarkedCallAndOnlyThat() {
        let lines = [
            NewerOSCalls.attribute,
            "extension Clock {",
            "    func drive(_ work: () -> Void) { run(until: date) }",
            "}",
            "func unmarked() async {",
            "    await clock.settle()",
            "    clock.run(until: date)",
            "    let text = \"settle() in a string\"  // settle() in a comment",
            "    if \(NewerOSCalls.check), let clock {",
            "        await clock.drive {}",
            "    } else {",
            "        await clock.drive {}",
            "    }",
            "    executor.run(job)",
            "}",
            NewerOSCalls.attribute,
            "func settle() async {}",
            "struct Suite {",
            "    " + NewerOSCalls.attribute,
            "    func helper() {}",
            "    func test() { helper() }",
            "}",
        ]
        let file = (path: "Sample.swift", lines: lines)
        let names = NewerOSCalls.declaredNames(in: [file])
        #expect(names.everywhere == ["drive(", "settle("])
        #expect(names.inFile == ["Sample.swift": ["helper("]])
        let found = NewerOSCalls.uncovered(in: file, names: names.everywhere.union(["run(until:", "helper("]))
        #expect(found.map(\.line) == [6, 7, 12, 21])
    }
}
