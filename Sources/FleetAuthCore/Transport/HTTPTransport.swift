/// Sends one HTTP request and returns the response: the seam between FleetAuth and the
/// network.
///
/// Implement it to plug in your own HTTP stack: return every response, whatever its status
/// (FleetAuth judges statuses itself); throw for failures with no response, and throw
/// `CancellationError` promptly when the calling task is cancelled. See
/// <doc:ImplementingATransport> for a wrapping transport, and `TransportConformanceSuite` in
/// `FleetAuthTransportTesting` for the behaviour FleetAuth relies on.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the backend's answer, whatever its status.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
