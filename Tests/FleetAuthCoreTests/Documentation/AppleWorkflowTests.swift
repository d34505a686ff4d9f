import FleetAuthTestSupport
import Foundation
import Testing

/// The Apple platforms' workflow cannot run here; what it would build and skip can be read.
@Suite("The Apple platforms' workflow", .timeLimit(.minutes(1)))
struct AppleWorkflowTests {
    static func text(_ path: String) throws -> String {
        try String(contentsOf: ReadmeSample.document(path), encoding: .utf8)
    }

    /// The words of a bash array assignment `name=(…)` in `script`, over several lines.
    static func array(_ name: String, in script: String) -> [String] {
        guard let start = script.range(of: "\n\(name)=(") else { return [] }
        let rest = script[start.upperBound...]
        let body = rest[..<(rest.firstIndex(of: ")") ?? rest.endIndex)]
        return body.split(whereSeparator: { " \n".contains($0) }).map(String.init)
    }

    @Test func everyLibraryProductIsBuiltForEveryPlatform() throws {
        let manifest = try Self.text("Package.swift")
        let libraries = manifest.components(separatedBy: ".library(name: \"").dropFirst()
            .map { String($0.prefix { $0 != "\"" }) }
        let script = try Self.text(".ci/apple")
        #expect(libraries.count == 7)
        #expect(Self.array("products", in: script) == libraries)
        for platform in ["iOS", "iOS Simulator", "tvOS", "watchOS", "visionOS"] {
            #expect(script.contains("\"generic/platform=\(platform)\""), "\(platform)")
        }
        #expect(script.contains("\"platform=macOS\""))
        #expect(script.contains("SWIFT_TREAT_WARNINGS_AS_ERRORS=YES"))
    }

    /// The simulator cannot start python3: the suites that use the loopback fixture are the
    /// ones skipped there, no more.
    @Test func theSimulatorSkipsExactlyTheSuitesThatStartTheLoopbackServer() throws {
        let usesLoopback = Set(
            PlatformBranchesTests.swiftFiles(under: "Tests")
                .filter { file in NewerOSCalls.code(of: file.lines).contains { NewerOSCalls.uses($0, "LoopbackServer") }
                }
                .map { $0.path.split(separator: "/")[1] }
                .filter { $0.hasSuffix("Tests") }
                .map(String.init))
        let skipped = Set(Self.array("needs_loopback", in: try Self.text(".ci/apple")))
        #expect(skipped == usesLoopback)
    }

    @Test func theWorkflowRunsEveryStepOnTheImagesDefaultXcode() throws {
        let workflow = try Self.text(".github/workflows/apple-platforms.yml")
        for step in ["swift-test", "build", "simulator-test"] {
            #expect(workflow.contains("run: .ci/apple \(step)\n"), "\(step)")
        }
        #expect(!workflow.contains("xcode-select"))
        #expect(!workflow.contains("\t"))
    }
}
