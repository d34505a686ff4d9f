public import Foundation

/// A token the engine has fetched, validated and cached.
///
/// ``value`` is the secret that goes into `Authorization: Bearer …`. Everything a log or
/// debugger can see — ``description``, `debugDescription`, `dump`, mirrors — shows the
/// ``fingerprint`` instead.
///
/// Copies share one immutable storage object, so handing a token out of the cache costs a
/// single reference count.
public struct AuthToken: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// One allocation per token, and each vehicle of a fleet simulator holds one: its
    /// fields are packed.
    private final class Storage: Sendable {
        /// The fingerprint's 32 bits, hashed once: every fleet call tags its token, and
        /// hashing the value each time cost a simulator more than the tag's use. First, so
        /// they are near the object's reference count, most often on its cache line: a call in
        /// flight reads them when it is answered, from memory that the rest of a simulated
        /// fleet's updates have pushed out of the processor's caches, and releases the token
        /// then too.
        let fingerprintBits: UInt32
        /// How far the backend's clock ran ahead of the device's when the token arrived, in
        /// 32 bits (within 8 ms for offsets up to a day; it is judged and shown in seconds):
        /// with the fingerprint's bits it takes the 8 bytes this alone took.
        let issuerClockOffset: Float
        let value: String
        let scope: AuthorizationScope
        let receivedAt: Date
        let expiresAt: Date
        let lifetime: TimeInterval
        /// When the token expires on the uptime of the clock that fetched it: uptimes of
        /// two clocks do not compare.
        let uptimeExpiry: (clock: any WallClock, expiresAt: TimeInterval)?

        init(
            value: String, scope: AuthorizationScope, receivedAt: Date, expiresAt: Date, lifetime: TimeInterval,
            uptimeExpiry: (clock: any WallClock, expiresAt: TimeInterval)?, issuerClockOffset: TimeInterval
        ) {
            (self.value, self.scope, self.receivedAt, self.expiresAt) = (value, scope, receivedAt, expiresAt)
            (self.lifetime, self.uptimeExpiry) = (lifetime, uptimeExpiry)
            self.issuerClockOffset = Float(issuerClockOffset)
            fingerprintBits = AuthToken.fingerprintBits(of: value)
        }
    }

    private let storage: Storage

    /// The compact JWT. Never log it.
    public var value: String { storage.value }

    /// `Bearer <value>`, the `Authorization` header a fleet call sends, made for each call: a
    /// token kept for every vehicle of a fleet holds one copy of its value, not two (about
    /// 770 bytes a vehicle over real HTTP, where the request copies the header anyway). Never
    /// log it.
    package var authorizationHeader: String { "Bearer " + storage.value }

    /// The vehicle or trip the token was fetched for.
    public var scope: AuthorizationScope { storage.scope }
    /// When the token arrived, by the device clock.
    public var receivedAt: Date { storage.receivedAt }
    /// When the token expires, by the device clock: the receipt time plus the life the
    /// token had left by the issuer's clock, so a device clock that is off does not matter.
    public var expiresAt: Date { storage.expiresAt }
    /// The token's full lifetime as issued (`exp − iat`), or its remaining life at receipt
    /// when `iat` is absent. Refresh margins scale with it.
    package var lifetime: TimeInterval { storage.lifetime }

    /// The decoded claims (empty if the value is not a JWT), decoded at each access: a cache
    /// of many tokens should not carry them all, and only tests and diagnostics read them.
    package var claims: JWTClaims { (try? JWTDecoder.decode(value)) ?? JWTClaims() }

    /// When the token expires on the uptime of the provider's clock, which no change of the
    /// device's time moves; `nil` for a token FleetAuth did not fetch.
    package var expiresAtUptime: TimeInterval? { storage.uptimeExpiry?.expiresAt }

    /// Creates a token as a test double: what an app's own tests hand to the code that shows or
    /// sends a token, without a provider or a clock. FleetAuth checks nothing here; a token it
    /// fetches comes from ``TokenAuthorization/token(for:)``.
    ///
    /// <!-- snippet setup:
    /// import FleetAuthDriver
    /// import Foundation
    /// -->
    /// ```swift
    /// let received = Date(timeIntervalSince1970: 1_800_000_000)
    /// let token = AuthToken(
    ///     value: "header.payload.signature", scope: DriverAuthorizationContext(vehicleID: "v-42").scope,
    ///     expiresAt: received.addingTimeInterval(3600), receivedAt: received)
    /// print(token)  // AuthToken(tok_…, vehicle v-42, expires 2027-01-15T09:00:00Z): never the value
    /// ```
    /// - Parameters:
    ///   - value: The compact JWT (any string: it is not decoded).
    ///   - scope: The vehicle or trip the token is for.
    ///   - expiresAt: When the token expires, by the device clock.
    ///   - receivedAt: When it arrived, by the device clock; its lifetime is `expiresAt −
    ///     receivedAt`. Default: now. Tokens compare equal only when this is equal too, so
    ///     pass it for tokens a test compares.
    public init(value: String, scope: AuthorizationScope, expiresAt: Date, receivedAt: Date = Date()) {
        self.init(value: value, scope: scope, receivedAt: receivedAt, expiresAt: expiresAt, lifetime: nil)
    }

    /// Creates a token record. `lifetime` is its life as minted (default: `expiresAt −
    /// receivedAt`); `uptimeExpiry` is when it expires on the uptime of the clock that
    /// fetched it, so that anyone can tell its life left whatever clock they hold.
    package init(
        value: String, scope: AuthorizationScope, receivedAt: Date, expiresAt: Date, lifetime: TimeInterval? = nil,
        uptimeExpiry: (clock: any WallClock, expiresAt: TimeInterval)? = nil, issuerClockOffset: TimeInterval = 0
    ) {
        storage = Storage(
            value: value, scope: scope, receivedAt: receivedAt, expiresAt: expiresAt,
            lifetime: lifetime ?? expiresAt.timeIntervalSince(receivedAt), uptimeExpiry: uptimeExpiry,
            issuerClockOffset: issuerClockOffset)
    }

    /// The object holding the token's fields, for the test that holds its size to the
    /// allocator's 176-byte block: a simulator's every vehicle holds one.
    package var storageObject: AnyObject { storage }

    /// Whether `other` is this token or a copy of it, not only an equal one: the same fetch's
    /// token. Compares one reference; `==` compares values when the two differ. (No caller in
    /// the package since the reporter stopped keeping its headers; a member of 2.0.0, which
    /// the API check holds.)
    package func isIdentical(to other: AuthToken) -> Bool { storage === other.storage }

    /// How far the backend's clock (its `Date` header, or an `iat` in the device's future) ran
    /// ahead of the device's when the token arrived; negative when behind, 0 when unknown.
    package var issuerClockOffset: TimeInterval { TimeInterval(storage.issuerClockOffset) }

    /// The life left: on the uptime of the clock that fetched the token when there is one
    /// (whatever clock the caller holds), else by wall time against `wallNow`.
    package func remainingLife(wallNow: @autoclosure () -> Date) -> TimeInterval {
        if let (clock, expiresAtUptime) = storage.uptimeExpiry { return expiresAtUptime - clock.uptime() }
        return expiresAt.timeIntervalSince(wallNow())
    }

    /// Wraps a value that FleetAuth did not fetch or validate itself (a custom provider's):
    /// the expiry is the JWT's `exp` when the value is a JWT that has one, otherwise unknown
    /// (`Date.distantFuture`); the lifetime is `exp − iat` when both are present, else 0.
    package init(unvalidatedValue value: String, scope: AuthorizationScope, receivedAt: Date) {
        let claims = (try? JWTDecoder.decode(value)) ?? JWTClaims()
        let expiresAt = claims.expiresAt ?? .distantFuture
        let lifetime = claims.issuedAt.map { expiresAt.timeIntervalSince($0) } ?? 0
        self.init(value: value, scope: scope, receivedAt: receivedAt, expiresAt: expiresAt, lifetime: lifetime)
    }

    /// Equal when value, scope, receipt and expiry times and lifetime are equal.
    public static func == (lhs: AuthToken, rhs: AuthToken) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.value == rhs.value && lhs.scope == rhs.scope && lhs.receivedAt == rhs.receivedAt
                && lhs.expiresAt == rhs.expiresAt && lhs.lifetime == rhs.lifetime)
    }

    /// A short, non-reversible tag for the token, safe to log: `tok_` and 8 hex digits of
    /// a 64-bit FNV-1a hash of the value. Equal tokens have equal fingerprints.
    public var fingerprint: String { Self.fingerprint(bits: storage.fingerprintBits) }

    /// The fingerprint of any token value.
    public static func fingerprint(of value: String) -> String {
        fingerprint(bits: fingerprintBits(of: value))
    }

    /// The fingerprint of a token value that is part of a longer string (an `Authorization`
    /// header), without copying it out.
    package static func fingerprint(ofPart value: Substring) -> String {
        fingerprint(bits: fingerprintBits(of: value))
    }

    /// The top 32 bits of the 64-bit FNV-1a hash of `value`'s UTF-8, over contiguous bytes
    /// (stepping through `utf8` one index at a time cost several times more).
    private static func fingerprintBits(of value: some StringProtocol) -> UInt32 {
        let hash = value.utf8.withContiguousStorageIfAvailable(fnv1a) ?? fnv1a(Array(value.utf8))
        return UInt32(truncatingIfNeeded: hash >> 32)
    }

    /// `tok_` and `bits` in 8 hex digits (a small string: no allocation).
    private static func fingerprint(bits: UInt32) -> String {
        let hex = String(bits, radix: 16)
        return "tok_" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// 64-bit FNV-1a of `bytes`.
    private static func fnv1a<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `AuthToken(tok_1a2b3c4d, vehicle v-42, expires 2026-11-22T10:00:00Z)`.
    public var description: String {
        "AuthToken(\(fingerprint), \(scope), expires \(HTTPDate.iso8601(expiresAt)))"
    }

    /// A mirror without the token's value, so `dump` and debuggers cannot print it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "fingerprint": fingerprint, "scope": scope, "receivedAt": receivedAt, "expiresAt": expiresAt,
                "lifetime": lifetime,
            ], displayStyle: .struct)
    }
}
