// The adapter an app writes to hand FleetAuth's consumer provider to the platform consumer
// SDK: the SDK takes an NSObject conforming to its own Objective-C protocol, not FleetAuth's
// `ConsumerAuthorization`. Copy this class; rename the platform types to the SDK's.
import FleetAuthConsumer
import Foundation
import PlatformSDK

/// Answers the platform consumer SDK's token requests with a `ConsumerTokenProvider`.
final class ConsumerPlatformTokenAdapter: NSObject, PlatformTripAuthorization, Sendable {
    private let provider: ConsumerTokenProvider

    init(provider: ConsumerTokenProvider) {
        self.provider = provider
    }

    func fetchToken(
        with authorizationContext: PlatformTripAuthorizationContext?, completion: @escaping PlatformTokenCompletion
    ) {
        // 1. Map the context: the SDK's trip to FleetAuth's. Without one, `nil` makes the
        //    provider answer with a `missingContext` error, asynchronously.
        let context = authorizationContext.map { ConsumerAuthorizationContext(tripID: $0.tripID) }
        // 2. Fetch. The provider takes the SDK's block as it is, and calls it exactly once and
        //    never inside this call, even when the token is cached.
        provider.fetchToken(with: context, completion: completion)
    }
}
