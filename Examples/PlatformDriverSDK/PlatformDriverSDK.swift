// A stand-in for the platform driver SDK's authorization protocol and context, as Swift
// imports them from Objective-C (under neutral names; the real ones carry the SDK's
// prefix). The real SDK is closed source and Apple-only: this module lets the adapters of
// `PlatformAdapter` and `DeliveryAdapter` compile and run anywhere, against the same shapes.
// The on-demand and delivery driver SDKs share this protocol and its context.
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
public final class PlatformDriverSDK: @unchecked Sendable {
    // Safe because `answers` is only touched while `lock` is held; `authorization` is a
    // constant the SDK only calls through its thread-safe contract.
    /// How one request for a token ended.
    public struct Answer: Sendable {
        /// The token it completed with.
        public let token: String?
        /// The error it completed with, as the SDK would log it.
        public let error: String?
        /// Completions seen for this request: the contract says exactly one.
        public let completions: Int
        /// Whether the completion ran before `fetchToken` had returned, on the asking thread.
        public let calledSynchronously: Bool
    }

    private let authorization: any PlatformAuthorization
    private let queue = DispatchQueue(label: "platform-sdk")
    private let lock = NSLock()

    /// Creates the SDK with the app's authorization object.
    public init(authorization: any PlatformAuthorization) {
        self.authorization = authorization
    }

    /// Asks for a token for `context` as the SDK does before a location update, and returns
    /// how the request ended once it has, waiting up to `patience` seconds for more
    /// completions than one.
    public func requestToken(for context: PlatformAuthorizationContext?, patience: TimeInterval = 0.05) async -> Answer
    {
        let record = Record()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async { [authorization] in
                let asker = pthread_self()
                record.update { $0.inCall = true }
                authorization.fetchToken(with: context) { token, error in
                    let first = record.update { state -> Bool in
                        state.completions += 1
                        if state.inCall && pthread_equal(pthread_self(), asker) != 0 { state.synchronous = true }
                        state.token = token
                        state.error = error.map { ($0 as NSError).localizedDescription }
                        return state.completions == 1
                    }
                    if first { done.resume() }
                }
                record.update { $0.inCall = false }
            }
        }
        // A second completion, if the adapter breaks the contract, comes soon after the first.
        try? await Task.sleep(nanoseconds: UInt64(patience * 1_000_000_000))
        return record.update { state in
            Answer(
                token: state.token, error: state.error, completions: state.completions,
                calledSynchronously: state.synchronous)
        }
    }

    /// One request's record, written from whichever thread the completion runs on.
    private final class Record: @unchecked Sendable {
        // Safe because `state` is only touched inside `update`, under `lock`.
        struct State {
            var inCall = false
            var completions = 0
            var synchronous = false
            var token: String?
            var error: String?
        }
        private let lock = NSLock()
        private var state = State()
        func update<T>(_ body: (inout State) -> T) -> T { lock.withLock { body(&state) } }
    }
}
