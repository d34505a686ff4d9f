import FleetAuthFleetService
import Testing

/// The in-memory fleet service finds the route and the ID of every call in its path, read
/// over the path's bytes: the rules a path is read by must hold for every form it comes in.
@Suite("Fleet service routes read from a path", .timeLimit(.minutes(10)))
struct FleetServiceRouteTests {
    @Test(arguments: [
        ("/v1/providers/p-1/vehicles/v-1", "vehicles", "v-1"),
        ("//v1//providers/p-1/vehicles//v-1", "vehicles", "v-1"),
        ("/v1/providers/p-1/deliveryVehicles/dv-1", "deliveryVehicles", "dv-1"),
        ("/v1/providers/p-1/trips/t%3A1", "trips", "t:1"),
        ("/v1/providers/p%2D1/taskTrackingInfo/s-1", "taskTrackingInfo", "s-1"),
        ("/v1/providers/p-1/vehicles/caf\u{E9}", "vehicles", "caf\u{E9}"),
    ])
    func aPathOfOursNamesItsRouteAndID(path: String, collection: String, id: String) {
        let match = FleetServiceRoute.match(path: path, providerID: "p-1")
        #expect(match?.route.collection == collection && match?.id == id, "\(path)")
    }

    @Test(arguments: [
        "/v1/providers/p-2/vehicles/v-1", "/v1/providers/p-1/vehicles/v-1/more", "/v1/providers/p-1/vehicles",
        "/v1/providers/p-1/things/x", "/v2/providers/p-1/vehicles/v-1", "/V1/providers/p-1/vehicles/v-1", "",
    ])
    func anotherPathNamesNone(path: String) {
        #expect(FleetServiceRoute.match(path: path, providerID: "p-1") == nil, "\(path)")
    }

    /// Beyond ASCII a segment is compared as a string: the same ID in another Unicode form
    /// is the same provider.
    @Test func aProviderIDBeyondASCIIMatchesInEitherUnicodeForm() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(FleetServiceRoute.match(path: "/v1/providers/\(decomposed)/vehicles/v-1", providerID: composed) != nil)
        #expect(FleetServiceRoute.match(path: "/v1/providers/caf%C3%A9/vehicles/v-1", providerID: composed) != nil)
    }
}
