import FleetAuthInMemory
import Foundation
import Testing

/// The doubles route by a path read without decoding when decoding would not change it:
/// it must read as `URL.path` does for every form of path.
@Suite("The path the in-memory doubles route by", .timeLimit(.minutes(10)))
struct RoutingPathTests {
    @Test(arguments: [
        "https://fleet.example.com/v1/providers/p/vehicles/v-1?updateMask=lastLocation",
        "https://fleet.example.com/a/b/", "https://fleet.example.com/", "https://fleet.example.com",
        "https://fleet.example.com/a%2Fb", "https://fleet.example.com/caf%C3%A9/x", "https://fleet.example.com/a;p=1/b",
        "https://fleet.example.com//a//b", "https://fleet.example.com/a/./b/../c",
        "https://fleet.example.com/a.b/c~d_e",
        "http://127.0.0.1:8080/token/driver/v-1", "https://fleet.example.com/a#fragment",
    ])
    func readsAsURLPathReads(url: String) throws {
        let url = try #require(URL(string: url))
        #expect(url.routingPath == url.path)
    }
}
