import Foundation

/// A ready observer that writes one line per ``TokenEvent`` at or above a level.
///
/// <!-- snippet setup:
/// import FleetAuthDriver
/// import FleetAuthURLSession
/// let endpoint = TokenEndpoint(url: "https://api.example.com/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp)
/// -->
/// ```swift
/// let provider = try DriverTokenProvider(
///     endpoint: endpoint, transport: URLSessionTransport(),
///     observer: TokenEventLogger(minimumLevel: .info).log)
/// // info fleetauth: fetchSucceeded vehicle v-42 tok_1a2b3c4d in 0.180 s, expires in 3600 s
/// ```
///
/// Lines carry the scope and token fingerprints, never a token's value. Lookups served from
/// the cache are ``TokenEventLevel/debug``, so the default ``TokenEventLevel/info`` logs a line
/// per fetch, not per location update. The default destination is standard error; pass
/// `write` to send lines elsewhere: your logging system, or the unified log on Apple
/// platforms (<doc:WhatTheProviderDoes#Logs> shows how).
public struct TokenEventLogger: Sendable {
    /// The lowest level written; events below it are skipped before any text is made.
    public var minimumLevel: TokenEventLevel
    /// Receives each written event's level and line; standard error unless the logger was
    /// made with a `write` of its own. ``log(_:)`` checks the level before calling it.
    public var write: @Sendable (TokenEventLevel, String) -> Void

    /// A logger writing events at `minimumLevel` and above.
    /// - Parameters:
    ///   - minimumLevel: the lowest level written. Default ``TokenEventLevel/info``.
    ///   - write: receives each event's level and line (`info fleetauth: fetchSucceeded
    ///     vehicle v-42 tok_1a2b3c4d …`); called on the thread that caused the event, so keep
    ///     it short. Default (`nil`): standard error, one write per line.
    public init(
        minimumLevel: TokenEventLevel = .info, write: (@Sendable (TokenEventLevel, String) -> Void)? = nil
    ) {
        self.minimumLevel = minimumLevel
        self.write = write ?? TokenEventLogger.writeToStandardError
    }

    /// Writes `event` if its level is at least the logger's minimum level. Pass `logger.log` as a
    /// provider's or engine's `observer`.
    /// - Parameter event: what the engine did.
    public func log(_ event: TokenEvent) {
        let level = event.level
        guard level >= minimumLevel else { return }
        write(level, "\(level) fleetauth: \(event)")
    }

    /// Writes `line` and a newline to standard error in one call, so threads do not interleave.
    package static func writeToStandardError(_ level: TokenEventLevel, _ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
