/// Supplies tokens for trip refreshes: the consumer side of the token-provider contract.
///
/// It is ``/FleetAuthCore/TokenAuthorization`` for trip contexts; the contract, the async methods and
/// invalidation come from there. ``ConsumerTokenProvider`` keeps every rule of it. To write
/// your own, implement the completion method:
///
/// ```swift
/// import FleetAuthConsumer
///
/// final class FixedTokenProvider: ConsumerAuthorization {
///     let token: String
///     init(token: String) { self.token = token }
///
///     func fetchToken(
///         with authorizationContext: ConsumerAuthorizationContext?,
///         completion: @escaping AuthTokenFetchCompletionHandler
///     ) {
///         let token = self.token
///         Task { completion(token, nil) }
///     }
/// }
/// ```
public protocol ConsumerAuthorization: TokenAuthorization where Context == ConsumerAuthorizationContext {}
