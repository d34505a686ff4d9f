import FleetAuthCore
import FleetAuthFleetService
import Foundation
import Testing

/// The package's calls throw untyped inside and typed at their public door: what reaches
/// the app is the fleet service error that was thrown, field for field, and anything else
/// arrives as a `network` fault that names it.
@Suite("Errors at the public door of a call", .timeLimit(.minutes(10)))
struct FleetServiceErrorRethrowTests {
    let scope = AuthorizationScope(kind: .vehicle, id: "v-42")

    @Test func aFleetServiceErrorPassesUnchanged() {
        let thrown = FleetServiceError(
            fault: .service, message: "The fleet service answered HTTP 503.", scope: scope, status: 503,
            tokenFingerprint: "tok_1a2b3c4d", underlyingError: URLError(.badServerResponse))
        let caught = #expect(throws: FleetServiceError.self) {
            try FleetServiceError.rethrow(thrown as any Error, scope: AuthorizationScope(kind: .trip, id: "t-1"))
        }
        #expect(caught?.fault == .service)
        #expect(caught?.message == thrown.message)
        #expect(caught?.scope == scope)
        #expect(caught?.status == 503)
        #expect(caught?.tokenFingerprint == "tok_1a2b3c4d")
        #expect((caught?.underlyingError as? URLError)?.code == .badServerResponse)
    }

    @Test func anotherErrorArrivesAsANetworkFaultNamingIt() {
        let caught = #expect(throws: FleetServiceError.self) {
            try FleetServiceError.rethrow(URLError(.timedOut), scope: scope)
        }
        #expect(caught?.fault == .network)
        #expect(caught?.scope == scope)
        #expect(caught?.status == nil)
        #expect((caught?.underlyingError as? URLError)?.code == .timedOut)
        #expect(caught?.message == "\(URLError(.timedOut))")
    }
}
