import FleetAuthCore
import Foundation
import Testing

/// A fleet whose tokens were minted in the same instant, looking them up every 5 s on the
/// manual clock for three hours: the token backend sees its refreshes spread out, not the
/// whole fleet in one minute every hour.
@Suite("Refresh spread: a fleet that starts together", .timeLimit(.minutes(10)))
struct RefreshSpreadTests {
    static let vehicles = 500

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func run(spreads: Bool, outage: Range<TimeInterval> = 0..<0, until end: TimeInterval = 3 * 3600) async throws
        -> OutageSimulation.Outcome
    {
        var simulation = OutageSimulation()
        simulation.vehicles = Self.vehicles
        simulation.watchFrom = 0  // every lookup simulated: a spread token may turn stale early
        simulation.refresh.spreadsRefreshes = spreads
        return try await simulation.run(outage: outage, until: end)
    }

    /// The busiest 5-minute bin of hours 2 and 3 over their mean bin.
    static func busiestOverMean(_ requestTimes: [TimeInterval]) -> Double {
        var bins = [Int](repeating: 0, count: 24)
        for time in requestTimes where time >= 3600 && time < 3 * 3600 {
            bins[Int((time - 3600) / 300)] += 1
        }
        let mean = Double(bins.reduce(0, +)) / Double(bins.count)
        return Double(bins.max() ?? 0) / max(mean, 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFleetMintedTogetherRefreshesSpreadOverTheTokensLife() async throws {
        let outcome = try await run(spreads: true)
        #expect(outcome.failures.isEmpty)
        #expect(outcome.statistics.waits == Self.vehicles)  // the cold start only
        // Measured with 10,000 vehicles: 1.2; with 500, 1.2 to 1.4.
        let ratio = Self.busiestOverMean(outcome.requestTimes)
        #expect(ratio <= 2, "busiest 5 min at \(ratio) × the mean")
        let firstHour = Double(outcome.requestTimes.filter { $0 < 3600 }.count) / Double(Self.vehicles)
        #expect(firstHour <= 2.5)
        let laterPerDay = Double(outcome.requestTimes.filter { $0 >= 3600 }.count) / Double(Self.vehicles) * 12
        #expect(laterPerDay <= 28)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func withoutTheSpreadTheFleetRefreshesInStep() async throws {
        let outcome = try await run(spreads: false)
        #expect(outcome.failures.isEmpty)
        // Every vehicle in the same 5 minutes of each hour.
        #expect(Self.busiestOverMean(outcome.requestTimes) >= 8)
    }

    /// Spread refreshes start only earlier than the schedule: among 500 vehicles some are
    /// at their worst moment whenever the outage starts, and none fails a lookup.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: [1500.0, 3200.0])
    func aSpreadFleetRidesOutAFiveMinuteOutage(start: TimeInterval) async throws {
        let outcome = try await run(spreads: true, outage: start..<(start + 300), until: start + 420)
        #expect(outcome.failures.isEmpty, "\(outcome.failures.count) failed lookups")
        // Refreshes were due during the outage, and failed.
        #expect(outcome.requestTimes.filter { (start..<(start + 300)).contains($0) }.count > 100)
    }
}
