// The adapter an app writes to hand FleetAuth's provider to the platform driver SDK: the
// SDK takes an NSObject conforming to its own Objective-C protocol, not FleetAuth's
// `DriverAuthorization`. Copy this class; rename the platform types to the SDK's.
import FleetAuthDriver
import Foundation
import PlatformSDK

/// Answers the platform SDK's token requests with a `DriverTokenProvider`.
final class PlatformTokenAdapter: NSObject, PlatformAuthorization, Sendable {
    private let provider: DriverTokenProvider

    init(provider: DriverTokenProvider) {
        self.provider = provider
    }

    func fetchToken(
        with authorizationContext: PlatformAuthorizationContext?, completion: @escaping PlatformTokenCompletion
    ) {
        // 1. Map the context. The platform's sample asserts when the vehicle ID is missing,
        //    which crashes debug builds and does nothing in release ones; answer with an
        //    error instead (asynchronously, as the contract requires): the SDK reports it
        //    and asks again at the next update.
        guard let vehicleID = authorizationContext?.vehicleID, !vehicleID.isEmpty else {
            // `nil` makes the provider answer with a `missingContext` error, asynchronously.
            return provider.fetchToken(with: nil, completion: completion)
        }
        let context = DriverAuthorizationContext(vehicleID: vehicleID, taskID: authorizationContext?.taskID)
        // 2. Fetch. DriverTokenProvider takes the SDK's block as it is, and calls it exactly
        //    once and never inside this call, even when the token is cached or the provider
        //    is released meanwhile.
        provider.fetchToken(with: context, completion: completion)
    }
}
