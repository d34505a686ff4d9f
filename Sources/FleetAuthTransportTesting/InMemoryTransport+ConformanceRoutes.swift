public import FleetAuthCore
public import FleetAuthInMemory
import Foundation

extension InMemoryTransport {
    /// Serves the routes ``TransportConformanceSuite`` expects, so the suite can run in
    /// process against a transport that wraps this one.
    /// - Parameter clock: the clock `/conformance/hang` sleeps a day on; by default one that
    ///   nobody advances, so it answers only when cancelled.
    public func mountConformanceRoutes(clock: any WallClock = ManualWallClock()) {
        route("/conformance/echo") { request in
            let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
            var headers: [String: String] = [:]
            for (name, value) in request.headers { headers[name.lowercased()] = value }
            let object: [String: Any] = [
                "method": request.method, "query": components?.percentEncodedQuery ?? "",
                "headers": headers, "body": (request.body ?? Data()).base64EncodedString(),
            ]
            return TransportResponse(
                status: 200, headers: ["Content-Type": "application/json"],
                body: try JSONSerialization.data(withJSONObject: object))
        }
        for status in [401, 404, 429, 503] {
            route("/conformance/status/\(status)") { _ in
                TransportResponse(
                    status: status, headers: ["X-Conformance": "yes"], body: Data("status \(status)".utf8))
            }
        }
        route("/conformance/bytes") { request in
            let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let count = items.first { $0.name == "count" }?.value.flatMap(Int.init) ?? 0
            return TransportResponse(status: 200, body: Data(repeating: UInt8(ascii: "a"), count: min(count, 1 << 20)))
        }
        route("/conformance/redirect") { _ in
            TransportResponse(status: 302, headers: ["Location": "https://elsewhere.invalid/token"])
        }
        route("/conformance/hang") { _ in
            try await clock.sleep(for: 86_400)
            return TransportResponse(status: 200)
        }
    }
}
