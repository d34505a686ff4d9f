import Dispatch
import FleetAuthCore
import Foundation

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
        /// Jobs queued so far, ever.
        var scheduled: UInt64 = 0
        /// Callers of ``settle()``, woken when no job is pending.
        var settleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Callers of ``waitForWork(after:grace:)``, by ID, woken by the next job.
        var workWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiterID: UInt64 = 0
    }

    private let queue = DispatchQueue(label: "FleetAuthInMemory.ManualWallClock")
    private let state = LockedState(State())

    /// Runs `job` on the serial queue, counted as pending until it returns.
    func schedule(_ job: @escaping @Sendable () -> Void) {
        let workWaiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.pending += 1
            state.scheduled += 1
            guard !state.workWaiters.isEmpty else { return [] }
            defer { state.workWaiters.removeAll() }
            return Array(state.workWaiters.values)
        }
        for waiter in workWaiters { waiter.resume(returning: true) }
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

    /// How many jobs have been queued so far: a mark for ``waitForWork(after:grace:)``.
    var scheduledCount: UInt64 { state.withLock { $0.scheduled } }

    /// Returns `true` as soon as a job is queued after the mark `scheduledCount` gave (at
    /// once if one already was), or `false` once `grace` seconds of real time pass without
    /// one: work that a completion from off the clock (`Task {}`, a dispatch queue, a real
    /// network) is about to queue gets that long to arrive.
    func waitForWork(after mark: UInt64, grace: TimeInterval) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let arrived = state.withLock { state -> Bool in
                if state.scheduled > mark { return true }
                state.workWaiters[id] = continuation
                return false
            }
            if arrived { return continuation.resume(returning: true) }
            let state = self.state
            // Real time on a dispatch timer, neither on the clock's executor nor on the shared
            // pool of tasks, which a busy test run can keep from waking a sleeping task for
            // longer than the grace.
            DispatchQueue.global().asyncAfter(deadline: .now() + grace) {
                state.withLock { $0.workWaiters.removeValue(forKey: id) }?.resume(returning: false)
            }
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
