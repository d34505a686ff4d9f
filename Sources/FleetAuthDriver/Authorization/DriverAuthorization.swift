/// Supplies tokens for vehicle updates: the driver side of the token-provider contract.
///
/// The contract: `fetchToken(with:completion:)` may be called from any thread; the
/// completion must be called exactly once, asynchronously, from any thread; the token
/// returned should have at least 5 minutes of life left; a token is reused until its
/// lifetime nears its end. ``DriverTokenProvider`` keeps all of these rules. To write
/// your own, implement the completion method; the async method comes with it:
///
/// ```swift
/// import FleetAuthDriver
///
/// final class FixedTokenProvider: DriverAuthorization {
///     let token: String
///     init(token: String) { self.token = token }
///
///     func fetchToken(
///         with authorizationContext: DriverAuthorizationContext?,
///         completion: @escaping AuthTokenFetchCompletionHandler
///     ) {
///         let token = self.token
///         Task { completion(token, nil) }
///     }
/// }
/// ```
public protocol DriverAuthorization: Sendable {
    /// Fetches a token for the context's vehicle and passes it, or an error, to
    /// `completion`.
    func fetchToken(
        with authorizationContext: DriverAuthorizationContext?,
        completion: @escaping AuthTokenFetchCompletionHandler)

    /// Fetches a token for the context's vehicle.
    func fetchToken(with authorizationContext: DriverAuthorizationContext?) async throws -> String

    /// Drops `token` because the fleet service rejected it (401/403), so the next fetch
    /// returns another. Returns whether a cached token was dropped. Providers without a
    /// cache need not implement it.
    @discardableResult
    func invalidate(_ token: String, for authorizationContext: DriverAuthorizationContext) -> Bool
}

extension DriverAuthorization {
    /// Bridges the completion method: the first completion wins, and one with neither a
    /// token nor an error throws `emptyProviderResponse`.
    public func fetchToken(with authorizationContext: DriverAuthorizationContext?) async throws -> String {
        try await ProviderBridge.await { completion in
            fetchToken(with: authorizationContext, completion: completion)
        }
    }

    /// Does nothing and returns `false`: a provider without a cache has nothing to drop.
    @discardableResult
    public func invalidate(_ token: String, for authorizationContext: DriverAuthorizationContext) -> Bool { false }
}
