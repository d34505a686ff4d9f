public import FleetAuthCore
public import FleetAuthFleetService

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

extension AuthorizedCaller {
    /// Sends a `URLRequest` with a bearer token as `send(_:)` sends a
    /// ``/FleetAuthCore/TransportRequest``, and returns the 2xx response.
    ///
    /// Its body must be `httpBody`: a streamed body cannot be sent again after a rejected
    /// token, so it is refused as a `caller` fault before anything is sent, as is a request
    /// without a URL.
    public func send(_ request: URLRequest) async throws(FleetServiceError) -> TransportResponse {
        guard let url = request.url else {
            throw FleetServiceError(
                fault: .caller, message: "The URLRequest has no URL. Nothing was sent.", scope: context.scope)
        }
        guard request.httpBodyStream == nil else {
            throw FleetServiceError(
                fault: .caller,
                message:
                    "The URLRequest's body is a stream, which cannot be sent again after a rejected token; set httpBody instead. Nothing was sent.",
                scope: context.scope)
        }
        return try await send(
            TransportRequest(
                method: request.httpMethod ?? "GET", url: url,
                headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody, timeout: request.timeoutInterval))
    }
}
