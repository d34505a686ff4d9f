/// Sends one HTTP request and returns the response: the seam between FleetAuth and the
/// network.
///
/// Implement it to plug in your own HTTP stack. Return every response, whatever its
/// status (FleetAuth judges statuses itself); throw for failures with no response, and
/// throw `CancellationError` promptly when the calling task is cancelled. Cross-cutting
/// concerns (extra headers, logging) are best added by wrapping another transport:
///
/// ```swift
/// import FleetAuthCore
///
/// struct HeaderAddingTransport: HTTPTransport {
///     let base: any HTTPTransport
///     let name: String
///     let value: String
///
///     func send(_ request: TransportRequest) async throws -> TransportResponse {
///         var request = request
///         request.headers[name] = value
///         return try await base.send(request)
///     }
/// }
/// ```
///
/// `TransportConformanceSuite` in `FleetAuthTransportTesting` checks a transport against the
/// behaviour FleetAuth relies on.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the backend's answer, whatever its status.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
