import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTransportTesting
import Foundation
import Testing

@Suite("Transport conformance suite", .timeLimit(.minutes(10)))
struct TransportConformanceSuiteTests {
    let base = URL(string: "https://conformance.example")!

    @Test func inMemoryTransportConforms() async {
        let transport = InMemoryTransport()
        transport.mountConformanceRoutes()
        // A long cancellation deadline, paid only by a transport that fails the check: under the
        // thread sanitizer with the whole suite running, the tasks that cancel and watch the
        // request have waited more than the default 5 s for a thread.
        let failures = await TransportConformanceSuite(transport: transport, baseURL: base, cancellationDeadline: 60)
            .run()
        #expect(failures.isEmpty, "\(failures)")
    }

    /// A transport that follows redirects, loses headers and ignores cancellation.
    struct CarelessTransport: HTTPTransport {
        let base: InMemoryTransport

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            var stripped = request
            stripped.headers = [:]
            if request.url.path.hasSuffix("/hang") { return TransportResponse(status: 200) }
            let response = try await base.send(stripped)
            if (300...399).contains(response.status) { return TransportResponse(status: 200) }
            if response.status >= 400 { throw URLError(.badServerResponse) }
            return response
        }
    }

    /// A transport that checks cancellation once, then sends without honouring it.
    struct CheckOnceTransport: HTTPTransport {
        let base: InMemoryTransport

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            try Task.checkCancellation()
            // Detached: the request runs on whatever the caller does.
            return try await Task.detached { try await base.send(request) }.value
        }
    }

    @Test func aTransportThatChecksCancellationOnlyBeforeSendingFailsInsteadOfHanging() async {
        let inner = InMemoryTransport()
        inner.mountConformanceRoutes()
        let suite = TransportConformanceSuite(
            transport: CheckOnceTransport(base: inner), baseURL: base, cancellationDeadline: 0.2)
        let failure = await suite.check("cancellation")
        #expect(failure?.detail.contains("had not ended") == true, "\(String(describing: failure))")
    }

    @Test func aCarelessTransportFailsTheRightChecks() async {
        let inner = InMemoryTransport()
        inner.mountConformanceRoutes()
        let failures = await TransportConformanceSuite(transport: CarelessTransport(base: inner), baseURL: base).run()
        #expect(
            Set(failures.map(\.check)) == [
                "headersRoundTrip", "nonSuccessStatus", "redirectNotFollowed", "cancellation",
            ])
    }
}
