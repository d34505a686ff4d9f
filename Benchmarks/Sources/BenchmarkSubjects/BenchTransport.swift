public import FleetAuthCore
public import Foundation

/// A token backend for the benchmarks: mints a JWT for the requested vehicle after
/// `latency` seconds on `clock`, counts requests, and keeps nothing else (so memory
/// measurements see only the SDK's own cache).
public final class BenchTransport: HTTPTransport {
    /// The token endpoint's URL.
    public static let endpointURL = URL(string: "https://backend.example.com/token")!
    /// The token endpoint every benchmark asks.
    public static let endpoint = TokenEndpoint(url: endpointURL.absoluteString, format: .swiftSample())

    /// Real time for the backend's minting and latency (the SDK's own default clock is not
    /// public): wall time, and uptime that counts from boot.
    public static let systemClock: any WallClock = RealClock()

    private let clock: any WallClock
    private let latency: TimeInterval
    private let lifetime: TimeInterval
    private let counter = Locked(0)

    /// Creates a backend answering after `latency` seconds of `clock`, minting `lifetime`-second tokens.
    public init(clock: any WallClock, latency: TimeInterval, lifetime: TimeInterval = 3600) {
        self.clock = clock
        self.latency = latency
        self.lifetime = lifetime
    }

    /// Requests answered so far.
    public var requestCount: Int { counter.withLock { $0 } }

    /// Mints a token for the request's vehicle.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let serial = counter.withLock { count -> Int in
            count += 1
            return count
        }
        if latency > 0 { try await clock.sleep(for: latency) }
        let vehicleID =
            URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name == "vehicleId" }?.value ?? ""
        let now = clock.now().timeIntervalSince1970.rounded(.down)
        let token = Self.jwt(
            header: ["alg": "RS256", "typ": "JWT", "kid": "bench-key"],
            payload: [
                "iss": "bench@example.iam.gserviceaccount.com", "sub": "bench@example.iam.gserviceaccount.com",
                "aud": TokenRules.fleetServiceAudience, "iat": now, "exp": now + lifetime, "jti": serial,
                "authorization": ["vehicleid": vehicleID],
            ])
        let body = try JSONSerialization.data(withJSONObject: ["token": token, "expiration": now + lifetime])
        return TransportResponse(status: 200, headers: ["Date": Self.httpDate(clock.now())], body: body)
    }

    /// `Date` header text; made per request, which only the backend's replies pay for.
    private static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

extension BenchTransport {
    /// An unsigned JWT of `header` and `payload` (the benchmarks verify no signature).
    static func jwt(header: [String: Any], payload: [String: Any]) -> String {
        func part(_ object: [String: Any]) -> String {
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return "\(part(header)).\(part(payload)).c2lnbmF0dXJl"
    }
}

/// Real time: `Date()`, the boot-time uptime and `Task.sleep`.
struct RealClock: WallClock {
    func now() -> Date { Date() }
    func uptime() -> TimeInterval { ProcessInfo.processInfo.systemUptime }
    func sleep(for duration: TimeInterval) async throws {
        guard duration > 0 else { return }
        try await Task.sleep(nanoseconds: UInt64(duration * 1e9))
    }
}
