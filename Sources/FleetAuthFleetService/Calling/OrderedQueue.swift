import FleetAuthCore

/// Runs async operations one at a time, in the order they were submitted.
///
/// An actor does not do this: it is reentrant at every `await`, so a second update could
/// overtake the first while the first waits for its token. Shared by FleetAuth's modules.
package final class OrderedQueue: Sendable {
    private struct State {
        var busy = false
        var submitted = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = LockedState(State())

    package init() {}

    /// Waits for every earlier operation to finish, then runs `operation`.
    package func run<Result: Sendable, Failure: Error>(
        _ operation: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        await acquire()
        defer { release() }
        return try await operation()
    }

    /// How many operations have been submitted so far, finished or not.
    package var submittedCount: Int {
        state.withLock { $0.submitted }
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                state.submitted += 1
                if state.busy {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
