import BenchmarkSubjects
import FleetAuthCore
import Foundation

/// BASELINE, not for use: a faithful port of the seed page's Swift `SampleAccessTokenProvider`
/// logic, kept only inside this benchmark to measure what FleetAuth replaces.
///
/// Like the sample it keeps one cache slot, compares the stored expiry (read from the
/// response as absolute seconds) with the device clock and no margin, and on a miss sends a
/// request — one per caller, with no single flight and no validation. Each read and write
/// of the slot is locked so the port is memory-safe in Swift 6; the check-then-fetch
/// sequence is not atomic, exactly as in the sample.
final class SeedSampleProvider: Sendable {
    private struct CachedToken {
        let token: String
        let expiration: TimeInterval
        let vehicleID: String
    }

    private let slot = Locked<CachedToken?>(nil)
    private let transport: any HTTPTransport
    private let url: URL
    private let clock: any WallClock
    private let requests = Locked(0)

    init(url: URL, transport: any HTTPTransport, clock: any WallClock) {
        self.url = url
        self.transport = transport
        self.clock = clock
    }

    /// Backend requests made so far.
    var requestCount: Int { requests.withLock { $0 } }

    /// The sample's `fetchToken`: cached if unexpired and for this vehicle, else a request.
    func fetchToken(vehicleID: String) async throws -> String {
        if let cached = slot.withLock({ $0 }), cached.expiration > clock.now().timeIntervalSince1970,
            cached.vehicleID == vehicleID
        {
            return cached.token
        }
        requests.withLock { $0 += 1 }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "vehicleId", value: vehicleID)]
        let response = try await transport.send(TransportRequest(url: components.url!))
        guard let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let token = object["token"] as? String, let expiration = (object["expiration"] as? NSNumber)?.doubleValue
        else { throw URLError(.cannotParseResponse) }
        slot.withLock { $0 = CachedToken(token: token, expiration: expiration, vehicleID: vehicleID) }
        return token
    }
}
