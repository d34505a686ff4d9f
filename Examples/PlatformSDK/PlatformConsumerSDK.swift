// A stand-in for the platform consumer SDK's authorization protocol and context, as Swift
// imports them from Objective-C (under neutral names; the real ones carry the SDK's prefix),
// so that the consumer adapter of `ConsumerPlatformAdapter` compiles and runs anywhere against
// the same shapes. The consumer SDK's context always names its trip.
public import Foundation

/// The platform consumer SDK's authorization context: an Objective-C object naming the trip
/// the SDK follows. Immutable, so it may cross threads.
public final class PlatformTripAuthorizationContext: NSObject, Sendable {
    /// The trip.
    public let tripID: String

    /// Creates a context.
    public init(tripID: String) {
        self.tripID = tripID
    }
}

/// The platform consumer SDK's authorization protocol: an `NSObject` that supplies trips'
/// tokens, called from the SDK's own threads.
public protocol PlatformTripAuthorization: NSObjectProtocol, Sendable {
    /// The contract: call `completion` exactly once, asynchronously, with a token or an error.
    func fetchToken(
        with authorizationContext: PlatformTripAuthorizationContext?, completion: @escaping PlatformTokenCompletion)
}

/// What the platform consumer SDK does with the provider it is given, reduced to what matters
/// here: it asks for a trip's token from its own queue and checks how the completion is called.
public final class PlatformConsumerSDK: Sendable {
    private let authorization: any PlatformTripAuthorization
    private let queue = DispatchQueue(label: "platform-consumer-sdk")

    /// Creates the SDK with the app's authorization object.
    public init(authorization: any PlatformTripAuthorization) {
        self.authorization = authorization
    }

    /// Asks for a token for `context` as the SDK does before it refreshes a trip, and returns
    /// how the request ended once it has, waiting up to `patience` seconds for more
    /// completions than one.
    public func requestToken(
        for context: PlatformTripAuthorizationContext?, patience: TimeInterval = 0.05
    ) async -> PlatformTokenAnswer {
        await PlatformTokenAnswer.record(on: queue, patience: patience) { [authorization] completion in
            authorization.fetchToken(with: context, completion: completion)
        }
    }
}
