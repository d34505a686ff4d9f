import Dispatch
import FleetAuthCore

/// The serial executor that a ``ManualWallClock``'s simulation runs on: the SDK's tasks, the
/// operations of `runToCompletion(horizon:_:)` and every child task they start. It counts the
/// jobs queued on it, so that the clock can tell when all that work is suspended (on the
/// clock, or on another task's result) without the work telling it anything.
///
/// One job runs at a time, in the order they were queued, so a simulation takes the same
/// steps on every run.
final class SimulationExecutor: Sendable {
    private struct State {
        /// Jobs queued or running.
        var pending = 0
        /// Callers of ``settle()``, woken when no job is pending.
        var settleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let queue = DispatchQueue(label: "FleetAuthInMemory.ManualWallClock")
    private let state = LockedState(State())

    /// Runs `job` on the serial queue, counted as pending until it returns.
    func schedule(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.pending += 1 }
        queue.async {
            job()
            let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.pending -= 1
                guard state.pending == 0 else { return [] }
                defer { state.settleWaiters.removeAll() }
                return state.settleWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once no job is queued or running.
    func settle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let settled = state.withLock { state -> Bool in
                if state.pending == 0 { return true }
                state.settleWaiters.append(continuation)
                return false
            }
            if settled { continuation.resume() }
        }
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension SimulationExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        schedule { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
