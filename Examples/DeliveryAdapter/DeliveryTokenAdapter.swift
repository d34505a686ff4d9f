// The adapter of "Porting from the platform's samples", as a delivery app ports the delivery
// driver sample's `AccessTokenProvider`: the SDK keeps an object of its own protocol, which
// forwards to FleetAuth's provider. Rename the platform types to the SDK's.
import FleetAuthDriver
import Foundation
import PlatformSDK

/// Hands FleetAuth's provider to the driver SDK, which takes an object of its own protocol.
final class FleetAuthAuthorization: NSObject, PlatformAuthorization {
    private let provider: DriverTokenProvider

    init(provider: DriverTokenProvider) {
        self.provider = provider
    }

    func fetchToken(
        with authorizationContext: PlatformAuthorizationContext?,
        completion: @escaping PlatformTokenCompletion
    ) {
        guard let vehicleID = authorizationContext?.vehicleID else {
            // No vehicle ID yet: a `missingContext` error, asynchronously (the samples assert).
            return provider.fetchToken(with: nil, completion: completion)
        }
        let context = DriverAuthorizationContext(vehicleID: vehicleID, taskID: authorizationContext?.taskID)
        provider.fetchToken(with: context, completion: completion)
    }
}
