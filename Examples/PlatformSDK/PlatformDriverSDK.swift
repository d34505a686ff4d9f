// A stand-in for the platform driver SDK's authorization protocol and context, as Swift
// imports them from Objective-C (under neutral names; the real ones carry the SDK's
// prefix). The real SDK is closed source and Apple-only: this module lets the adapters of
// `PlatformAdapter` and `DeliveryAdapter` compile and run anywhere, against the same shapes.
// The on-demand and delivery driver SDKs share this protocol and its context; the consumer
// SDK's are in `PlatformConsumerSDK.swift`.
public import Foundation

/// The completion block of the platform's protocol, as Swift imports it: not `@Sendable`,
/// and callable from any thread.
public typealias PlatformTokenCompletion = (_ token: String?, _ error: (any Error)?) -> Void

/// The platform SDK's authorization context: an Objective-C object whose vehicle ID the
/// SDK fills in at each update (`nil` if it has none yet), and for delivery fleets the task.
/// Immutable, so it may cross threads.
public final class PlatformAuthorizationContext: NSObject, Sendable {
    /// The vehicle, `nil` before the app has set it.
    public let vehicleID: String?
    /// The delivery task a task call is for, `nil` otherwise.
    public let taskID: String?

    /// Creates a context.
    public init(vehicleID: String?, taskID: String? = nil) {
        self.vehicleID = vehicleID
        self.taskID = taskID
    }
}

/// The platform SDK's authorization protocol: an `NSObject` that supplies tokens. The SDK
/// calls it from its own threads, so a conforming object must be thread-safe (`Sendable`).
public protocol PlatformAuthorization: NSObjectProtocol, Sendable {
    /// The contract: call `completion` exactly once, asynchronously, with a token or an error.
    func fetchToken(
        with authorizationContext: PlatformAuthorizationContext?, completion: @escaping PlatformTokenCompletion)
}

/// What the platform SDK does with the provider it is given, reduced to what matters here:
/// it asks for a token from its own queue and checks how the completion is called.
public final class PlatformDriverSDK: Sendable {
    private let authorization: any PlatformAuthorization
    private let queue = DispatchQueue(label: "platform-sdk")

    /// Creates the SDK with the app's authorization object.
    public init(authorization: any PlatformAuthorization) {
        self.authorization = authorization
    }

    /// Asks for a token for `context` as the SDK does before a location update, and returns
    /// how the request ended once it has, waiting up to `patience` seconds for more
    /// completions than one.
    public func requestToken(for context: PlatformAuthorizationContext?, patience: TimeInterval = 0.05) async
        -> PlatformTokenAnswer
    {
        await PlatformTokenAnswer.record(on: queue, patience: patience) { [authorization] completion in
            authorization.fetchToken(with: context, completion: completion)
        }
    }
}
