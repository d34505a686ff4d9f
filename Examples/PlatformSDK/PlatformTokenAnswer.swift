public import Foundation

/// How one request of a platform SDK stand-in for a token ended: what the completion carried,
/// and whether it kept the contract the SDKs share (exactly once, never inside the call).
public struct PlatformTokenAnswer: Sendable {
    /// The token it completed with.
    public let token: String?
    /// The error it completed with, as the SDK would log it.
    public let error: String?
    /// Completions seen for this request: the contract says exactly one.
    public let completions: Int
    /// Whether the completion ran before `fetchToken` had returned, on the asking thread.
    public let calledSynchronously: Bool

    /// Runs `ask` on `queue` as an SDK asks its provider for a token, and returns how the
    /// request ended once it has, waiting up to `patience` seconds for more completions than
    /// one.
    static func record(
        on queue: DispatchQueue, patience: TimeInterval,
        _ ask: @escaping @Sendable (_ completion: @escaping PlatformTokenCompletion) -> Void
    ) async -> PlatformTokenAnswer {
        let record = Record()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async {
                let asker = pthread_self()
                record.update { $0.inCall = true }
                ask { token, error in
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
            PlatformTokenAnswer(
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
