import Foundation

/// Supplies tokens for one kind of context: the contract that the driver module's
/// `DriverAuthorization` and the consumer module's `ConsumerAuthorization` refine.
///
/// The contract: `fetchToken(with:completion:)` may be called from any thread; the
/// completion is called exactly once, asynchronously, from any thread; a token handed out
/// has at least 5 minutes of life left (``TokenProvider`` keeps that while the backend
/// answers; during an outage it serves a held token below it, down to its outage floor, which
/// the fleet service still accepts: see ``RefreshPolicy``); a token is reused until its
/// lifetime nears its end.
///
/// A provider written against the platform's completion-handler shape implements only
/// ``fetchToken(with:completion:)``; the async methods and ``invalidate(_:for:)`` come
/// with the protocol. ``TokenProvider`` implements every requirement itself.
///
/// ```swift
/// struct DepotContext: AuthorizationContext {
///     var depotID: String
///     var scope: AuthorizationScope { AuthorizationScope(kind: .vehicle, id: depotID) }
/// }
///
/// final class FixedDepotAuthorization: TokenAuthorization {
///     let token: String
///     init(token: String) { self.token = token }
///
///     func fetchToken(with authorizationContext: DepotContext?, completion: @escaping AuthTokenFetchCompletionHandler) {
///         let token = self.token
///         Task { completion(token, nil) }
///     }
/// }
/// ```
public protocol TokenAuthorization<Context>: Sendable {
    /// What a token is asked for: a vehicle context or a trip context.
    associatedtype Context: AuthorizationContext

    /// Fetches a token for the context and passes it, or an error, to `completion`.
    func fetchToken(with authorizationContext: Context?, completion: @escaping AuthTokenFetchCompletionHandler)

    /// Fetches a token value for the context. (Only the completion form takes an optional
    /// context, because the platform SDK may pass none.)
    func fetchToken(with authorizationContext: Context) async throws -> String

    /// The token for `authorizationContext` with its expiry, redacted in every
    /// description: the form to pass around inside an app.
    ///
    /// The default implementation fetches through ``fetchToken(with:completion:)`` and reads
    /// the expiry from the token's own `exp` claim when it is a JWT (no expiry otherwise).
    func token(for authorizationContext: Context) async throws -> AuthToken

    /// The cached token for `authorizationContext` if one can be handed out now without
    /// waiting, else `nil`; never fetches, never suspends. Callers that send many requests
    /// (`AuthorizedCaller`) ask it first. The default returns `nil`:
    /// a provider without a cache has nothing to hand out at once.
    func cachedUsableToken(for authorizationContext: Context) -> AuthToken?

    /// Drops `token` because the fleet service rejected it (401/403), so the next fetch
    /// returns another.
    /// - Returns: whether a cached token was dropped. Providers without a cache need not
    ///   implement it; the default does nothing and returns `false`.
    @discardableResult
    func invalidate(_ token: String, for authorizationContext: Context) -> Bool
}

extension TokenAuthorization {
    /// Bridges the completion method: the first completion wins, and one with neither a
    /// token nor an error throws `emptyProviderResponse`.
    public func fetchToken(with authorizationContext: Context) async throws -> String {
        try await ProviderBridge.await { completion in
            fetchToken(with: authorizationContext, completion: completion)
        }
    }

    /// Fetches the value through ``fetchToken(with:)`` and wraps it; the expiry is the
    /// JWT's `exp` when the value is a JWT that has one, otherwise unknown
    /// (`Date.distantFuture`).
    public func token(for authorizationContext: Context) async throws -> AuthToken {
        let value = try await fetchToken(with: authorizationContext)
        return AuthToken(unvalidatedValue: value, scope: authorizationContext.scope, receivedAt: Date())
    }

    /// The completion form for a block that Objective-C hands over: the platform SDK's
    /// `fetchToken(with:completion:)` passes its own completion, which Swift imports without
    /// `@Sendable`, so an adapter forwards it as it is:
    ///
    /// <!-- snippet setup:
    /// import FleetAuthDriver
    /// -->
    /// ```swift
    /// func forward(_ provider: some TokenAuthorization<DriverAuthorizationContext>,
    ///              completion: @escaping (String?, (any Error)?) -> Void) {
    ///     provider.fetchToken(with: DriverAuthorizationContext(vehicleID: "v-42"), completion: completion)
    /// }
    /// ```
    ///
    /// It forwards to the `@Sendable` requirement with a wrapper of `completion`.
    public func fetchToken(
        with authorizationContext: Context?, completion: @escaping (_ token: String?, _ error: (any Error)?) -> Void
    ) {
        // Why handing the block to another thread is safe: the platform's contract lets it be
        // called from any thread, and the requirement's contract calls it exactly once (our
        // providers: from their own task, after this call has returned), so no two threads
        // ever hold it at once. The one place FleetAuth takes that promise on trust, so that
        // adapters need not.
        nonisolated(unsafe) let completion = completion
        let sendable: AuthTokenFetchCompletionHandler = { token, error in completion(token, error) }
        fetchToken(with: authorizationContext, completion: sendable)
    }

    /// Drops `token` because the fleet service rejected it (401/403): the form for an app,
    /// which holds the ``AuthToken``; the string form is the platform SDK's.
    /// - Returns: whether a cached token was dropped.
    @discardableResult
    public func invalidate(_ token: AuthToken, for authorizationContext: Context) -> Bool {
        invalidate(token.value, for: authorizationContext)
    }

    /// Returns `nil`: a provider without a cache has nothing to hand out at once.
    public func cachedUsableToken(for authorizationContext: Context) -> AuthToken? { nil }

    /// Does nothing and returns `false`: a provider without a cache has nothing to drop.
    @discardableResult
    public func invalidate(_ token: String, for authorizationContext: Context) -> Bool { false }
}
