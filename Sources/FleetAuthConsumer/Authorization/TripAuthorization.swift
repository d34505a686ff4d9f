/// Supplies tokens for trips, in the shape of the platform consumer SDK's own protocol: the
/// name a provider ported from the platform's consumer sample conforms to.
///
/// It is ``/FleetAuthCore/TokenAuthorization`` for ``TripAuthorizationContext``, whose
/// `tripID` is never `nil`, as the platform's consumer context has it; the contract, the async
/// methods and invalidation come from there. ``ConsumerAuthorization`` is the wider protocol
/// that ``TripMonitor`` and ``ConsumerTokenProvider`` speak: trips, tracking IDs and tasks. A
/// provider of this shape implements the completion method, and goes wherever a trip's token
/// is asked for: ``TripMonitor``'s initializer takes
/// it, and a `TokenProvider<TripAuthorizationContext>` is one.
///
/// ```swift
/// import FleetAuthConsumer
///
/// final class FixedTripTokenProvider: TripAuthorization {
///     let token: String
///     init(token: String) { self.token = token }
///
///     func fetchToken(
///         with authorizationContext: TripAuthorizationContext?,
///         completion: @escaping AuthTokenFetchCompletionHandler
///     ) {
///         let token = self.token
///         Task { completion(token, nil) }
///     }
/// }
/// ```
public protocol TripAuthorization: TokenAuthorization where Context == TripAuthorizationContext {}

/// FleetAuth's provider for trip contexts is a ``TripAuthorization``.
extension TokenProvider: TripAuthorization where Context == TripAuthorizationContext {}
