import FleetAuthConsumer
import FleetAuthInMemory
import Testing

/// The trip context of a provider ported from the platform's consumer sample: a trip, whose ID
/// is always there, and the same trip as the consumer context names.
@Suite("Trip authorization context", .timeLimit(.minutes(10)))
struct TripAuthorizationContextTests {
    @Test func itNamesATripWhoseIDIsAString() {
        let context = TripAuthorizationContext(tripID: "t-e\u{301}")  // é typed as two scalars
        let tripID: String = context.tripID
        #expect(tripID == "t-\u{e9}")  // in NFC, as the fleet service compares IDs
        #expect(context.scope == ConsumerAuthorizationContext.trip("t-\u{e9}").scope)
        #expect("\(context)" == "trip t-\u{e9}")
    }

    @Test func aProviderOfTripContextsRefusesATemplateTheyCannotFill() {
        let transport = InMemoryTransport()
        #expect(throws: FleetAuthError.self) {
            _ = try TokenProvider<TripAuthorizationContext>(
                endpoint: TokenEndpoint(url: "https://b.example.com/token/{trackingId}"), transport: transport)
        }
        #expect(throws: Never.self) {
            _ = try TokenProvider<TripAuthorizationContext>(
                endpoint: TokenEndpoint(url: "https://b.example.com/token/{tripId}"), transport: transport)
        }
    }
}
