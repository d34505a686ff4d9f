import FleetAuthTestSupport
import Foundation
import Testing

/// What Apple's privacy report learns from the library: the driver module's manifest says
/// what it sends, and no module calls an API whose use Apple asks a reason for.
@Suite("Privacy manifest", .timeLimit(.minutes(1)))
struct PrivacyManifestTests {
    /// The driver module declares the precise location its reporter sends, linked to the
    /// driver, for the app's functionality, without tracking, and no required-reason API.
    @Test func theDriverModuleDeclaresThePreciseLocationItSends() throws {
        let url = ReadmeSample.repositoryURL.appendingPathComponent("Sources/FleetAuthDriver/PrivacyInfo.xcprivacy")
        let manifest = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any])
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)
        #expect((manifest["NSPrivacyAccessedAPITypes"] as? [Any])?.isEmpty == true)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(collected.count == 1)
        #expect(
            collected.first?["NSPrivacyCollectedDataType"] as? String == "NSPrivacyCollectedDataTypePreciseLocation")
        #expect(collected.first?["NSPrivacyCollectedDataTypeLinked"] as? Bool == true)
        #expect(collected.first?["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
        #expect(
            collected.first?["NSPrivacyCollectedDataTypePurposes"] as? [String]
                == ["NSPrivacyCollectedDataTypePurposeAppFunctionality"])
        let manifestLine = #"resources: [.copy("PrivacyInfo.xcprivacy")]"#
        let package = try String(
            contentsOf: ReadmeSample.repositoryURL.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(package.contains(manifestLine), "Package.swift must ship the manifest with FleetAuthDriver")
    }

    /// The APIs Apple's privacy manifests ask a reason for (user defaults, boot time, file
    /// timestamps, disk space, active keyboards) stay out of the library, so that its
    /// manifests declare none. A new use fails here with the line that makes it.
    @Test func theLibraryCallsNoRequiredReasonAPI() {
        let apis = [
            "UserDefaults", "systemUptime", "mach_absolute_time", "creationDate", "modificationDate",
            "ModificationDate", "getattrlist", "stat(", "statfs", "volumeAvailableCapacity", "systemFreeSize",
            "activeInputModes",
        ]
        for file in PlatformBranchesTests.swiftFiles(under: "Sources") {
            for line in file.lines where !line.hasPrefix("//") {
                for api in apis where line.contains(api) { Issue.record("\(file.path): `\(line)` calls \(api)") }
            }
        }
    }
}
