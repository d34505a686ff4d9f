import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Bad configuration is refused when the object is made", .timeLimit(.minutes(10)))
struct ConfigurationAtInitTests {
    let transport = InMemoryTransport()

    @Test(arguments: [
        ("no url at all", "is not an absolute http(s) URL"),
        ("ftp://files.example.com/token", "scheme `ftp` is not http or https"),
        ("http://backend.example.com/token", "Plain http to backend.example.com"),
        ("https://backend.example.com/token/{vehicle}", "placeholder `{vehicle}`"),
    ])
    func aDriverProviderRefusesAnUnusableTokenURL(url: String, named: String) {
        #expect {
            _ = try DriverTokenProvider(endpoint: TokenEndpoint(url: url), transport: transport)
        } throws: { error in
            guard let error = error as? FleetAuthError else { return false }
            return error.message.contains(named)
                && (error.reason == .invalidConfiguration || error.reason == .insecureEndpoint)
        }
    }

    @Test func loopbackHTTPAndTheOptInStayAllowed() throws {
        _ = try DriverTokenProvider(endpoint: TokenEndpoint(url: "http://127.0.0.1:8080/token"), transport: transport)
        _ = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "http://backend.test/token", allowsInsecureHTTP: true), transport: transport)
    }

    func reporter(
        providerID: String = "demo-project", vehicleID: String = "v-42", taskID: String? = nil,
        baseURL: String = "https://fleet.example.com"
    ) throws(FleetServiceError) -> VehicleReporter {
        let provider = try! DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport)
        return try VehicleReporter(
            fleetService: FleetServiceEndpoint(baseURL: URL(string: baseURL)!, providerID: providerID),
            vehicleID: vehicleID, taskID: taskID, authorization: provider, transport: transport)
    }

    @Test(arguments: [
        ("task/9", "The task ID contains `/`"),
        (" task-9", "The task ID has leading or trailing whitespace"),
        ("", "The task ID is empty"),
    ])
    func aReporterRefusesABadTaskID(taskID: String, named: String) {
        #expect {
            _ = try reporter(taskID: taskID)
        } throws: { error in
            guard let error = error as? FleetServiceError else { return false }
            return error.fault == .caller && error.message.hasPrefix(named)
        }
    }

    @Test func aReporterNamesTheProviderIDWhenItIsTheBadOne() {
        #expect {
            _ = try reporter(providerID: "bad/provider")
        } throws: { error in
            guard let error = error as? FleetServiceError else { return false }
            return error.fault == .caller && error.message.hasPrefix("The provider ID contains `/`")
                && !error.message.contains("vehicle ID")
        }
    }

    @Test(arguments: [
        ("http://fleet.example.com", "plain http to fleet.example.com"),
        ("ftp://fleet.example.com", "scheme `ftp` is not https"),
    ])
    func aReporterRefusesAnUnusableFleetURL(baseURL: String, named: String) throws {
        #expect {
            _ = try reporter(baseURL: baseURL)
        } throws: { error in
            (error as? FleetServiceError)?.message.contains(named) == true
        }
    }
}
