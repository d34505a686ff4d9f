import FleetAuthConsumer
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Consumer configuration is refused when the object is made", .timeLimit(.minutes(10)))
struct ConsumerConfigurationTests {
    let transport = InMemoryTransport()

    @Test func aConsumerProviderRefusesATemplateItsContextsCannotFill() {
        #expect {
            _ = try ConsumerTokenProvider(
                endpoint: TokenEndpoint(url: "https://b.example.com/token/{vehicleId}"), transport: transport)
        } throws: { error in
            (error as? FleetAuthError)?.reason == .invalidConfiguration
                && (error as? FleetAuthError)?.message.contains("`{vehicleId}` names a vehicle ID") == true
        }
        // Its own kinds' placeholders are accepted.
        for url in ["https://b.example.com/token/{tripId}", "https://b.example.com/token/{trackingId}"] {
            #expect(throws: Never.self) {
                _ = try ConsumerTokenProvider(endpoint: TokenEndpoint(url: url), transport: transport)
            }
        }
    }

    @Test(arguments: [
        ("http://fleet.example.com", "plain http to fleet.example.com"),
        ("ftp://fleet.example.com", "scheme `ftp` is not https"),
    ])
    func aMonitorRefusesAnUnusableFleetURL(baseURL: String, named: String) throws {
        let consumer = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport)
        #expect {
            _ = try TripMonitor(
                fleetService: FleetServiceEndpoint(baseURL: URL(string: baseURL)!, providerID: "demo-project"),
                authorization: consumer, transport: transport)
        } throws: { error in
            (error as? FleetServiceError)?.message.contains(named) == true
        }
    }

    @Test func aMonitorNamesABadProviderID() throws {
        let consumer = try ConsumerTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport)
        #expect {
            _ = try TripMonitor(
                fleetService: FleetServiceEndpoint(
                    baseURL: URL(string: "https://fleet.example.com")!, providerID: "my:project"),
                authorization: consumer, transport: transport)
        } throws: { error in
            (error as? FleetServiceError)?.message.hasPrefix("The provider ID contains `:`") == true
        }
    }
}
