import FleetAuthCore

/// Runs async operations one at a time, in the order they were submitted.
///
/// An actor does not do this: it is reentrant at every `await`, so a second update could
/// overtake the first while the first waits for its token. A task cancelled while it
/// waits for its turn leaves the queue at once without running its operation, so nothing
/// queues behind it. Shared by FleetAuth's modules.
package final class OrderedQueue: Sendable {
    private struct State {
        var busy = false
        /// The operation holding the turn.
        var running: UInt64?
        var submitted = 0
        var nextID: UInt64 = 0
        /// Waiting operations in the order they took their place, with what resumes them
        /// (`true`: run).
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        /// Operations cancelled before they took their place.
        var cancelledEarly: Set<UInt64> = []
    }
    private let state = LockedState(State())

    package init() {}

    /// Waits for every earlier operation to finish, then runs `operation`. When the task
    /// is cancelled before its turn comes, `operation` does not run and the error
    /// `cancelled()` makes is thrown.
    package func run<Result: Sendable, Failure: Error>(
        _ operation: () async throws(Failure) -> Result, cancelled: () -> Failure
    ) async throws(Failure) -> Result {
        guard await takeTurn() else { throw cancelled() }
        defer { endTurn() }
        return try await operation()
    }

    /// Waits for every earlier operation to finish and takes the turn: `false` when the task
    /// is cancelled first (it then has no turn to end). Whoever gets the turn must end it with
    /// ``endTurn()``. For a caller whose operation is its own code, with no closure and no
    /// generic frame between it and the calls it makes (every update in flight holds them).
    /// Runs on its caller's executor, as the usual turn is taken without a suspension: no
    /// hop to another executor and back.
    nonisolated(nonsending) package func takeTurn() async -> Bool {
        if admitAtOnce() { return true }
        return await acquire()
    }

    /// Ends the turn ``takeTurn()`` gave: the next operation in the queue runs.
    package func endTurn() {
        release()
    }

    /// How many operations have taken their place in the queue so far, finished or not.
    package var submittedCount: Int {
        state.withLock { $0.submitted }
    }

    /// Takes the turn if the queue is free and the task not cancelled: the usual case, with
    /// no suspension point and no continuation to wait on.
    private func admitAtOnce() -> Bool {
        state.withLock { state -> Bool in
            guard !state.busy, !Task.isCancelled else { return false }
            state.nextID += 1
            state.submitted += 1
            state.busy = true
            state.running = state.nextID
            return true
        }
    }

    /// Whether the caller got its turn (`false`: cancelled while waiting).
    ///
    /// An operation takes its place in the queue, is counted as submitted and is admitted
    /// in one critical section, so the queue's order is the order in which operations were
    /// counted. (Counting in one section and joining in another let a later operation join
    /// first.) The identifier only lets the cancellation handler find its operation.
    private func acquire() async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let decision = state.withLock { state -> Bool? in
                    state.submitted += 1
                    if state.cancelledEarly.remove(id) != nil { return false }
                    if state.busy {
                        state.waiting.append((id, continuation))
                        return nil
                    }
                    state.busy = true
                    state.running = id
                    return true
                }
                if let decision { continuation.resume(returning: decision) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                if let index = state.waiting.firstIndex(where: { $0.id == id }) {
                    return state.waiting.remove(at: index).continuation
                }
                // Admitted already: too late to leave. Not queued yet: it will see this.
                if state.running != id { state.cancelledEarly.insert(id) }
                return nil
            }
            waiter?.resume(returning: false)
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiting.isEmpty {
                state.busy = false
                state.running = nil
                return nil
            }
            let next = state.waiting.removeFirst()
            state.running = next.id
            return next.continuation
        }
        next?.resume(returning: true)
    }
}
