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
        let date = clock.now()
        let now = Int(date.timeIntervalSince1970.rounded(.down))
        let expiry = now + Int(lifetime)
        let token = Self.jwt(vehicleID: vehicleID, issuedAt: now, expiresAt: expiry, serial: serial)
        let body = Data(#"{"token":"\#(token)","expiration":\#(expiry)}"#.utf8)
        return TransportResponse(status: 200, headers: ["Date": Self.httpDate(date)], body: body)
    }
}

extension BenchTransport {
    /// The JWT's header part, the same for every token.
    private static let headerPart = base64URL(#"{"alg":"RS256","kid":"bench-key","typ":"JWT"}"#)
    private static let issuer = "bench@example.iam.gserviceaccount.com"

    /// An unsigned JWT for `vehicleID` (the benchmarks verify no signature), written as
    /// text: minting 100,000 of them through `JSONSerialization` and a `DateFormatter`
    /// took most of a scale run.
    static func jwt(vehicleID: String, issuedAt: Int, expiresAt: Int, serial: Int) -> String {
        let payload =
            #"{"aud":"\#(TokenRules.fleetServiceAudience)","authorization":{"vehicleid":"\#(jsonEscaped(vehicleID))"},"#
            + #""exp":\#(expiresAt),"iat":\#(issuedAt),"iss":"\#(issuer)","jti":\#(serial),"sub":"\#(issuer)"}"#
        return "\(headerPart).\(base64URL(payload)).c2lnbmF0dXJl"
    }

    /// `text`'s UTF-8 in unpadded base64url.
    static func base64URL(_ text: String) -> String {
        let base64 = Data(text.utf8).base64EncodedData()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base64.count)
        for byte in base64 {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): break
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` as the inside of a JSON string.
    static func jsonEscaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// `Date` header text (RFC 9110's IMF-fixdate), written out by hand for the same reason.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = days[Int(parts.tm_wday)]
        let day = "\(weekday), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900)"
        return "\(day) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
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

/// A clock whose wall time and uptime stand at the moment it was made; its sleeps take real
/// time. Under callgrind, fetching 100,000 tokens takes half an hour: on a running clock the
/// first ones would be in their refresh window by the time the lookups are counted.
public struct StandingClock: WallClock {
    private let date = Date()
    private let bootTime = ProcessInfo.processInfo.systemUptime

    /// Makes a clock standing at the present moment.
    public init() {}
    /// The moment the clock was made.
    public func now() -> Date { date }
    /// The uptime when the clock was made.
    public func uptime() -> TimeInterval { bootTime }
    /// Sleeps `duration` seconds of real time.
    public func sleep(for duration: TimeInterval) async throws {
        try await RealClock().sleep(for: duration)
    }
}
