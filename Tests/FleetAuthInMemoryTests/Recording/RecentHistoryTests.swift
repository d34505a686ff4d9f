import FleetAuthCore
import FleetAuthFleetService
import FleetAuthInMemory
import Foundation
import Testing

/// The in-memory doubles keep the latest calls, not all of them, so that a simulator's
/// memory does not grow with simulated time; their counts still cover every call.
@Suite("Bounded recording of the in-memory doubles", .timeLimit(.minutes(10)))
struct RecentHistoryTests {
    @Test(arguments: [(0, 10), (3, 10), (3, 2), (4, 100)])
    func keepsTheLatestEntriesAndCountsThemAll(limit: Int, appended: Int) {
        var history = RecentHistory<Int>(limit: limit)
        for value in 0..<appended { history.append(value) }
        #expect(history.elements == Array(max(0, appended - limit)..<appended))
        #expect(history.total == appended)
    }

    @Test func loweringTheLimitDropsTheOldest() {
        var history = RecentHistory<Int>(limit: 5)
        for value in 0..<5 { history.append(value) }
        history.limit = 2
        #expect(history.elements == [3, 4])
    }

    /// Past its limit the history is a ring: a change of limit then keeps the latest, in order.
    @Test func aChangeOfLimitAfterTheRingWrappedKeepsTheLatestInOrder() {
        var history = RecentHistory<Int>(limit: 3)
        for value in 0..<5 { history.append(value) }
        #expect(history.elements == [2, 3, 4])
        history.limit = 2
        #expect(history.elements == [3, 4])
        history.limit = 4
        for value in 5..<8 { history.append(value) }
        #expect(history.elements == [4, 5, 6, 7])
        #expect(history.total == 8)
    }

    /// The documented default, through the public API: 10,000 calls kept, every call counted.
    @Test func theFleetServiceKeepsTheLatestTenThousandCalls() async {
        let clock = ManualWallClock()
        let service = InMemoryFleetService(clock: clock)
        let transport = InMemoryTransport(clock: clock)
        transport.mount(service)
        let url = URL(string: "https://fleet.example.com/v1/providers/demo-project/vehicles/v-1")!
        for _ in 0..<10_001 {
            _ = try? await transport.send(TransportRequest(method: "PUT", url: url, body: Data("{}".utf8)))
        }
        #expect(service.calls.count == 10_000)
        #expect(service.rejectedCount == 10_001 && service.acceptedCount == 0)  // no token
        #expect(transport.requests.count == 10_000 && transport.requestCount == 10_001)
    }

    @Test(arguments: [
        (#"{"lastLocation":{"speed":1}}"#, #"{"name":"N","lastLocation":{"speed":1}}"#),
        (" { } ", #"{"name":"N" } "#),
        ("[1]", nil), ("{", nil), ("", nil),
    ])
    func anUpdateIsAnsweredWithItsNameSplicedIn(body: String, answer: String?) {
        let named = InMemoryFleetService.naming(Data(body.utf8), "N")
        #expect(named.map { String(decoding: $0, as: UTF8.self) } == answer)
    }

    @Test func aNameThatNeedsEscapingIsEscaped() throws {
        let named = try #require(InMemoryFleetService.naming(Data(#"{"a":1}"#.utf8), #"v"1\"#))
        #expect(String(decoding: named, as: UTF8.self) == #"{"name":"v\"1\\","a":1}"#)
    }
}
