/// Supplies tokens for vehicle updates: the driver side of the token-provider contract.
///
/// It is ``/FleetAuthCore/TokenAuthorization`` for vehicle contexts; the contract, the async methods and
/// invalidation come from there. ``DriverTokenProvider`` keeps every rule of it. To write
/// your own, implement the completion method:
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
public protocol DriverAuthorization: TokenAuthorization where Context == DriverAuthorizationContext {}
