import FleetAuthConsumer
import FleetAuthDriver
import Foundation
import Testing

@testable import SeedConsumerSample
@testable import SeedDriverSample

/// The platform's two Swift samples, renamed by the porting article's names table and nothing
/// else, are what `Examples/SeedSamples` builds in Swift 5 mode: the table and the API cannot
/// drift from the promise that the samples port by renaming their types.
@Suite("The seed's samples, renamed")
struct SeedSamplesTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // ExamplesTests
        .deletingLastPathComponent().deletingLastPathComponent()  // Examples

    /// The rows of the article's Names table that rename one type: the seed's name → ours.
    static func namesTable() throws -> [(seed: String, ours: String)] {
        let article = try String(
            contentsOf: examples.appendingPathComponent(
                "../Sources/FleetAuthCore/Documentation.docc/PortingFromThePlatformSDK.md"),
            encoding: .utf8)
        let table = try #require(article.components(separatedBy: "## Names").last)
        var rows: [(String, String)] = []
        for line in table.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map(String.init)
            let seed = names(in: cells[0])
            let ours = names(in: cells[1])
            // `SampleAccessTokenProvider` → two providers of ours: the sample's own class, not a rename.
            guard ours.count == 1 else { continue }
            rows += seed.map { ($0, ours[0]) }
        }
        return rows
    }

    /// The names in backticks in a table cell.
    static func names(in cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().compactMap {
            $0.offset % 2 == 1 ? String($0.element) : nil
        }
    }

    /// The seed's sample as a team ports it: the table's names, FleetAuth's module, the
    /// Foundation import the platform's module brought, and the sample's `URL(string:)` unwrapped.
    static func renamed(_ seed: String, module: String) throws -> String {
        var text = seed
        for row in try namesTable().sorted(by: { $0.seed.count > $1.seed.count }) {
            text = text.replacingOccurrences(of: row.seed, with: row.ours)
        }
        return
            text
            .replacingOccurrences(
                of: "import GoogleRidesharing\(module)\n",
                with: """
                    import FleetAuth\(module)
                    import Foundation
                    #if canImport(FoundationNetworking)
                      import FoundationNetworking
                    #endif

                    """
            )
            .replacingOccurrences(of: "URL(string: providerURL))", with: "URL(string: providerURL)!)")
    }

    @Test(arguments: ["Driver", "Consumer"])
    func eachSampleIsTheSeedRenamedByTheTable(module: String) throws {
        let seed = try String(
            contentsOf: Self.examples.appendingPathComponent("SeedSamples/Seed/\(module)Sample.swift.txt"),
            encoding: .utf8)
        let built = try String(
            contentsOf: Self.examples.appendingPathComponent("SeedSamples/\(module)/SampleAccessTokenProvider.swift"),
            encoding: .utf8)
        // The file's own comment, then the sample.
        let body = built.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0.hasPrefix("//") }.dropFirst().joined(separator: "\n")
        #expect(body == (try Self.renamed(seed, module: module)))
        #expect(!body.contains("GMT"), "a seed name the table does not rename")
    }

    @Test func theTableMapsTheConsumerContextToOneWhoseTripIDIsAString() throws {
        let table = Dictionary(try Self.namesTable(), uniquingKeysWith: { first, _ in first })
        #expect(table["GMTCAuthorizationContext"] == "TripAuthorizationContext")
        #expect(table["GMTCAuthorization"] == "TripAuthorization")
        let tripID: String = TripAuthorizationContext(tripID: "t-7").tripID
        #expect(tripID == "t-7")
    }

    @Test func theRenamedSamplesRunTheirFirstLines() async {
        // Without a context each answers its own error, as the seed's sample does.
        let driver: (any Error)? = await withCheckedContinuation { done in
            SeedDriverSample.SampleAccessTokenProvider().fetchToken(with: nil) { _, error in
                done.resume(returning: error)
            }
        }
        #expect(driver is SeedDriverSample.SampleAccessTokenProvider.AccessTokenError)
        let consumer: (any Error)? = await withCheckedContinuation { done in
            SeedConsumerSample.SampleAccessTokenProvider().fetchToken(with: nil) { _, error in
                done.resume(returning: error)
            }
        }
        #expect(consumer is SeedConsumerSample.SampleAccessTokenProvider.AccessTokenError)
    }
}
