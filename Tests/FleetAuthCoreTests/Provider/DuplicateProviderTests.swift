import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// Two providers in one process serving the same context from the same endpoint each fetch
/// their own token: the first time it happens, a warning says to make one provider per app.
@Suite("More than one provider", .timeLimit(.minutes(10)))
struct DuplicateProviderTests {
    let truck = TruckContext(vehicleID: "v-42")

    /// A provider on `clock` fetching from `url` through `transport`, recording its events.
    func provider(
        on clock: ManualWallClock, _ transport: InMemoryTransport, url: String = "https://backend.example.com/token"
    ) throws -> (TokenProvider<TruckContext>, LockedState<[TokenEvent]>) {
        let events = LockedState<[TokenEvent]>([])
        let provider = try TokenProvider<TruckContext>(
            endpoint: TokenEndpoint(url: url), transport: transport, clock: clock,
            observer: { event in events.withLock { $0.append(event) } })
        return (provider, events)
    }

    func world() -> (ManualWallClock, InMemoryTransport) {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/other-token")
        return (clock, transport)
    }

    func warnings(_ events: LockedState<[TokenEvent]>) -> [TokenEvent] {
        events.withLock { $0 }.filter { $0.kind == .duplicateProvider }
    }

    @Test func aSecondProviderFetchingTheSameContextWarnsOnce() async throws {
        let (clock, transport) = world()
        let (first, firstEvents) = try provider(on: clock, transport)
        let (second, secondEvents) = try provider(on: clock, transport)
        _ = try await first.token(for: truck)
        #expect(warnings(firstEvents).isEmpty)
        _ = try await second.token(for: truck)
        let warning = try #require(warnings(secondEvents).first)
        #expect(warning.level == .warning && warning.scope == truck.scope)
        #expect(warning.description.hasPrefix("duplicateProvider vehicle v-42: 2 providers"))
        #expect(warning.description.contains("one provider per app"))
        // The first provider, often the only one an app watches, hears it too.
        #expect(warnings(firstEvents).map(\.description) == warnings(secondEvents).map(\.description))
        // Once: another shared context says nothing more.
        _ = try await first.token(for: TruckContext(vehicleID: "v-7"))
        _ = try await second.token(for: TruckContext(vehicleID: "v-7"))
        #expect(warnings(secondEvents).count == 1)
        #expect(warnings(firstEvents).count == 1)
        #expect(transport.requestCount == 4)
    }

    @Test func providersOfOtherContextsEndpointsOrClocksSayNothing() async throws {
        let (clock, transport) = world()
        let (first, firstEvents) = try provider(on: clock, transport)
        let (other, otherEvents) = try provider(on: clock, transport, url: "https://backend.example.com/other-token")
        let (sameEndpoint, sameEvents) = try provider(on: clock, transport)
        _ = try await first.token(for: truck)
        _ = try await other.token(for: truck)
        _ = try await sameEndpoint.token(for: TruckContext(vehicleID: "v-7"))
        let (elsewhereClock, elsewhereTransport) = world()
        let (elsewhere, elsewhereEvents) = try provider(on: elsewhereClock, elsewhereTransport)
        _ = try await elsewhere.token(for: truck)
        for events in [firstEvents, otherEvents, sameEvents, elsewhereEvents] { #expect(warnings(events).isEmpty) }
    }

    /// The server sees one endpoint where the URLs differ only by the host's case or the
    /// scheme's default port.
    @Test(arguments: [
        "https://BACKEND.example.com/token", "https://backend.example.com:443/token",
        "HTTPS://backend.example.com/token",
    ])
    func endpointsAreComparedAsTheServerWould(url: String) async throws {
        let (clock, transport) = world()
        let (first, firstEvents) = try provider(on: clock, transport)
        let (second, secondEvents) = try provider(on: clock, transport, url: url)
        _ = try await first.token(for: truck)
        _ = try await second.token(for: truck)
        #expect(warnings(firstEvents).count == 1)
        #expect(warnings(secondEvents).count == 1)
    }

    /// A provider already warned goes on recording what it serves: a third provider that
    /// shares only a later context with it is warned too.
    @Test func aThirdProviderSharingALaterContextIsWarned() async throws {
        let (clock, transport) = world()
        let (first, _) = try provider(on: clock, transport)
        let (second, _) = try provider(on: clock, transport)
        let (third, thirdEvents) = try provider(on: clock, transport)
        _ = try await first.token(for: truck)
        _ = try await second.token(for: truck)
        let later = TruckContext(vehicleID: "v-7")
        _ = try await first.token(for: later)
        _ = try await third.token(for: later)
        #expect(warnings(thirdEvents).count == 1)
    }

    /// A path is the server's to read: one that differs in case is another endpoint.
    @Test func aPathThatDiffersInCaseIsAnotherEndpoint() async throws {
        let (clock, transport) = world()
        let (first, firstEvents) = try provider(on: clock, transport)
        let (second, secondEvents) = try provider(on: clock, transport, url: "https://backend.example.com/TOKEN")
        _ = try await first.token(for: truck)
        _ = try? await second.token(for: truck)
        #expect(warnings(firstEvents).isEmpty && warnings(secondEvents).isEmpty)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aReleasedProviderIsNoLongerCounted() async throws {
        let (clock, transport) = world()
        var first: TokenProvider<TruckContext>? = try provider(on: clock, transport).0
        _ = try await first?.token(for: truck)
        await first?.waitUntilIdle()
        // The fetch's task ends after it counted itself done, holding the provider until then.
        await clock.settle()
        first = nil
        let (second, events) = try provider(on: clock, transport)
        _ = try await second.token(for: truck)
        #expect(warnings(events).isEmpty)
    }
}
