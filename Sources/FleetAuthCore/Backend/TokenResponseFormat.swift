/// The shape of the token backend's answer: where the token is, and how (or whether) the
/// body states its expiry.
///
/// Whatever the format, the token must be a JWT and its `exp` claim is authoritative: a
/// body expiry that disagrees with `exp` by more than the tolerance is an
/// `expiryMismatch` error, which catches seconds/milliseconds mix-ups.
public struct TokenResponseFormat: Sendable, Hashable, CustomStringConvertible {
    /// How the body's expiry number is to be read.
    public struct ExpiryUnit: Sendable, Hashable {
        package enum Value: Sendable, Hashable { case absoluteSeconds, absoluteMilliseconds, secondsFromNow }
        package let value: Value

        /// Unix time in seconds.
        public static let absoluteSeconds = ExpiryUnit(value: .absoluteSeconds)
        /// Unix time in milliseconds.
        public static let absoluteMilliseconds = ExpiryUnit(value: .absoluteMilliseconds)
        /// Seconds from the moment the backend answered.
        public static let secondsFromNow = ExpiryUnit(value: .secondsFromNow)

        /// A readable name of the unit.
        package var name: String {
            switch value {
            case .absoluteSeconds: "absolute Unix seconds"
            case .absoluteMilliseconds: "absolute Unix milliseconds"
            case .secondsFromNow: "seconds from now"
            }
        }
    }

    /// Where the body states the expiry.
    package struct ExpiryField: Sendable, Hashable {
        package var key: String
        package var unit: ExpiryUnit
        package init(key: String, unit: ExpiryUnit) {
            self.key = key
            self.unit = unit
        }
    }

    package enum Body: Sendable, Hashable {
        case json(tokenKey: String, expiry: ExpiryField?)
        case plainText
    }

    /// What the parser reads: where the token is, and where (if anywhere) the body states
    /// its expiry. The one thing two formats compare and hash by.
    package let body: Body
    /// A short human name for messages and reports; shown by ``description``, never compared.
    private let name: String

    private init(body: Body, name: String) {
        self.body = body
        self.name = name
    }

    /// Equal when both read the same body, whatever they are called:
    /// `.tokenOnly == .json(tokenKey: "token")`.
    /// - Parameters:
    ///   - lhs: A format.
    ///   - rhs: Another format.
    /// - Returns: Whether the two read the token and its expiry from the same places, in the same unit.
    public static func == (lhs: TokenResponseFormat, rhs: TokenResponseFormat) -> Bool {
        lhs.body == rhs.body
    }

    /// Hashes the body the format reads, and not its name, as ``==(_:_:)`` compares.
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(body)
    }

    /// The format's name, such as `{jwt, expirationTimestamp in absolute ms}` or
    /// `accessToken + expiresAtMillis (absolute Unix milliseconds)`.
    public var description: String { name }

    /// A JSON object holding the token under `tokenKey` and, optionally, its expiry.
    ///
    /// ```swift
    /// // {"accessToken": "eyJ…", "expiresAtMillis": 1795000000000}
    /// let format = TokenResponseFormat.json(
    ///     tokenKey: "accessToken", expiryKey: "expiresAtMillis", expiryUnit: .absoluteMilliseconds)
    /// ```
    /// - Parameters:
    ///   - tokenKey: the top-level key whose string value is the JWT.
    ///   - expiryKey: the key of the body's own expiry number; `nil` when the body states
    ///     none (the JWT's `exp` is used alone). A stated expiry must agree with `exp`, so a
    ///     wrong unit fails as `expiryMismatch`.
    ///   - expiryUnit: how to read the number under `expiryKey`.
    /// - Returns: the format, for ``TokenEndpoint``'s `format`.
    public static func json(
        tokenKey: String, expiryKey: String? = nil, expiryUnit: ExpiryUnit = .absoluteSeconds
    ) -> TokenResponseFormat {
        json(tokenKey: tokenKey, expiry: expiryKey.map { ExpiryField(key: $0, unit: expiryUnit) }, name: nil)
    }

    /// A JSON format with its expiry field and, optionally, a name of its own.
    package static func json(tokenKey: String, expiry: ExpiryField?, name: String? = nil) -> TokenResponseFormat {
        let described = expiry.map { "\(tokenKey) + \($0.key) (\($0.unit.name))" } ?? "\(tokenKey) + JWT exp"
        return TokenResponseFormat(body: .json(tokenKey: tokenKey, expiry: expiry), name: name ?? described)
    }

    /// The body is the JWT itself (surrounding whitespace is ignored); expiry from `exp`.
    public static let plainText = TokenResponseFormat(body: .plainText, name: "plain-text JWT")

    /// `{"token": "…"}`; expiry from the JWT's `exp`. The default.
    public static let tokenOnly = json(tokenKey: "token", expiry: nil, name: "{token} + JWT exp")

    /// The seed's Swift sample: the expiry is absolute Unix seconds.
    public static func swiftSample(tokenKey: String = "token", expirationKey: String = "expiration")
        -> TokenResponseFormat
    {
        json(
            tokenKey: tokenKey, expiry: ExpiryField(key: expirationKey, unit: .absoluteSeconds),
            name: "Swift sample {\(tokenKey), \(expirationKey) in absolute s}")
    }

    /// The seed's Objective-C sample: the expiry is seconds from now.
    public static func objectiveCSample(tokenKey: String = "token", expirationKey: String = "expiration")
        -> TokenResponseFormat
    {
        json(
            tokenKey: tokenKey, expiry: ExpiryField(key: expirationKey, unit: .secondsFromNow),
            name: "Objective-C sample {\(tokenKey), \(expirationKey) in s from now}")
    }

    /// `{"jwt": "…", "expirationTimestamp": <absolute ms>}`.
    public static let jwtWithExpirationTimestamp = json(
        tokenKey: "jwt", expiry: ExpiryField(key: "expirationTimestamp", unit: .absoluteMilliseconds),
        name: "{jwt, expirationTimestamp in absolute ms}")

    /// `{"token": "…", "expiration_timestamp_ms": <absolute ms>}`.
    public static let tokenWithExpirationTimestampMilliseconds = json(
        tokenKey: "token", expiry: ExpiryField(key: "expiration_timestamp_ms", unit: .absoluteMilliseconds),
        name: "{token, expiration_timestamp_ms in absolute ms}")

    /// `{"token": "…", "expiresInSeconds": <seconds from now>}`.
    public static let tokenWithExpiresInSeconds = json(
        tokenKey: "token", expiry: ExpiryField(key: "expiresInSeconds", unit: .secondsFromNow),
        name: "{token, expiresInSeconds in s from now}")
}
