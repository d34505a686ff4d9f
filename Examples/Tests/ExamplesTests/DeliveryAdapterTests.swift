import FleetAuthDriver
import FleetAuthURLSession
import Foundation
import Testing

@testable import DeliveryAdapter

/// The delivery sample ported: the obvious adapter, the sample's preset and the delivery fleet
/// rule; a vehicle and its tasks cost what the vehicle alone does.
@Suite("The delivery sample, ported", .timeLimit(.minutes(10)))
struct DeliveryAdapterTests {
    @Test func aVehicleAndAHundredTasksCostOneTokenRequestEmbedded() async throws {
        let provider = try DeliveryAdapterExample.embeddedProvider()
        let report = await DeliveryAdapterExample.run(provider: provider, vehicleID: "dv-9", tasks: 100)
        #expect(report.broken.isEmpty && report.failed.isEmpty, "\(report.broken) \(report.failed)")
        #expect(report.served == 101)
        #expect(report.refusedMissingVehicle)
        #expect(report.tokenRequests == 1)
        #expect(report.passed)
    }

    @Test func theSampleRouteOverHTTPCostsOneTokenRequest() async throws {
        let server = try LoopbackFixture.shared.get()
        let provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(
                url: server.baseURL + "/token/delivery_driver/{vehicleId}",
                format: .tokenWithExpirationTimestampMilliseconds),
            transport: URLSessionTransport(), rules: TokenRules(fleet: .delivery))
        let report = await DeliveryAdapterExample.run(provider: provider, vehicleID: "dv-9", tasks: 20)
        #expect(report.broken.isEmpty && report.failed.isEmpty, "\(report.broken) \(report.failed)")
        #expect(report.served == 21 && report.tokenRequests == 1 && report.passed)
    }

    @Test func aReportThatCostsMoreThanTheSampleFails() {
        let report = DeliveryAdapterExample.Report(
            vehicleID: "dv-9", tasks: 3, served: 4, broken: [], failed: [], refusedMissingVehicle: true,
            tokenRequests: 4)
        #expect(!report.passed)
        #expect(report.description.hasSuffix("summary: FAILED"))
    }
}
