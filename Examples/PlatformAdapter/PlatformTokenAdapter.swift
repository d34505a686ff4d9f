// The adapter an app writes to hand FleetAuth's provider to the platform driver SDK: the
// SDK takes an NSObject conforming to its own Objective-C protocol, not FleetAuth's
// `DriverAuthorization`. Copy this class; rename the platform types to the SDK's.
import FleetAuthDriver
import Foundation

/// Answers the platform SDK's token requests with a `DriverTokenProvider`.
final class PlatformTokenAdapter: NSObject, PlatformAuthorization, Sendable {
    private let provider: DriverTokenProvider

    init(provider: DriverTokenProvider) {
        self.provider = provider
    }

    func fetchToken(
        with authorizationContext: PlatformAuthorizationContext?, completion: @escaping PlatformTokenCompletion
    ) {
        // The block comes from Objective-C, which does not mark it `@Sendable`, but the
        // platform's contract lets it be called from any thread, once: the provider below
        // calls it exactly once, from its own task.
        nonisolated(unsafe) let completion = completion
        // 1. Map the context. The platform's sample asserts when the vehicle ID is missing,
        //    which crashes debug builds and does nothing in release ones; answer with an
        //    error instead (asynchronously, as the contract requires): the SDK reports it
        //    and asks again at the next update.
        func refuse(_ message: String) {
            let error = FleetAuthError(code: .invalidContext, message: message)
            Task { completion(nil, error) }
        }
        guard let authorizationContext else {
            return refuse("The platform SDK asked for a token without an authorization context.")
        }
        guard let vehicleID = authorizationContext.vehicleID, !vehicleID.isEmpty else {
            return refuse(
                "The platform SDK asked for a token without a vehicle ID; set the vehicle ID before starting updates.")
        }
        let context = DriverAuthorizationContext(vehicleID: vehicleID, taskID: authorizationContext.taskID)
        // 2. Fetch. DriverTokenProvider calls its completion exactly once and never inside
        //    this call, even when the token is cached or the provider is released meanwhile.
        provider.fetchToken(with: context) { token, error in completion(token, error) }
    }
}
