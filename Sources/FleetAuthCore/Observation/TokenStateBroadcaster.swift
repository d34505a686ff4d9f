/// Delivers ``TokenState`` changes to the streams apps watch, each change once per stream.
///
/// Changes are numbered under the engine's lock and published after it: one that arrives
/// after a later one of its scope is dropped, so streams hear each scope in order.
package final class TokenStateBroadcaster: Sendable {
    private struct Subscriber {
        /// The scope watched; `nil` for every scope.
        let scope: AuthorizationScope?
        let continuation: AsyncStream<TokenState>.Continuation
        /// The number of the last change this stream heard per scope, and what it was told
        /// (`nil` after a sign-out: the next state is news).
        var last: [AuthorizationScope: (sequence: UInt64, state: TokenState?)] = [:]
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state = LockedState(State())
    /// Runs before each change is delivered, outside the lock (see
    /// `TokenProviderConfiguration.beforePublishingState`).
    private let beforePublishing: (@Sendable (TokenState) -> Void)?

    package init() {
        beforePublishing = nil
    }

    /// A broadcaster that runs `beforePublishing` on the publishing thread before each change.
    package init(beforePublishing: (@Sendable (TokenState) -> Void)?) {
        self.beforePublishing = beforePublishing
    }

    /// Whether any stream is open: the engine skips working out states otherwise.
    package var isWatched: Bool { state.withLock { !$0.subscribers.isEmpty } }

    /// The scopes that streams of one scope follow (not those of every-scope streams).
    package var watchedScopes: Set<AuthorizationScope> {
        state.withLock { Set($0.subscribers.values.compactMap(\.scope)) }
    }

    /// Opens a stream of the changes of `scope` (`nil`: of every scope); returns it with its
    /// ID, under which ``publish(_:to:)`` delivers the states that hold now. Keeps the newest
    /// 64 states for a slow reader.
    package func subscribe(to scope: AuthorizationScope?) -> (stream: AsyncStream<TokenState>, id: UInt64) {
        let (stream, continuation) = AsyncStream.makeStream(of: TokenState.self, bufferingPolicy: .bufferingNewest(64))
        let id: UInt64? = state.withLock { state in
            guard !state.finished else { return nil }
            state.nextID &+= 1
            state.subscribers[state.nextID] = Subscriber(scope: scope, continuation: continuation)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return (stream, 0)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return (stream, id)
    }

    /// Delivers `change`, the engine's change number `sequence`, to every stream watching
    /// its scope (only to stream `id` if given) that has heard no later change of that scope
    /// and was not last told the same.
    package func publish(_ change: TokenState, sequence: UInt64, to id: UInt64? = nil) {
        beforePublishing?(change)
        state.withLock { state in
            for (key, subscriber) in state.subscribers where id == nil || key == id {
                guard subscriber.scope == nil || subscriber.scope == change.scope else { continue }
                let last = subscriber.last[change.scope]
                if let last, last.sequence > sequence { continue }
                let signedOut = change.phase == .signedOut
                state.subscribers[key]?.last[change.scope] = (sequence, signedOut ? nil : change)
                if let told = last?.state, told.says(change) { continue }
                subscriber.continuation.yield(change)
            }
        }
    }

    /// Ends every stream; later subscriptions end at once.
    package func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}
