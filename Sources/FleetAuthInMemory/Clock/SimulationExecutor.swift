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
        /// Jobs queued and not yet started, oldest at `head`.
        var jobs: [UnownedJob] = []
        var head = 0
        /// Whether a drain of the queue is under way (a job may be running).
        var draining = false
        /// Jobs queued so far, ever.
        var scheduled: UInt64 = 0
        /// Callers of ``settle()``, woken when no job is pending.
        var settleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Callers of ``waitForWork(after:grace:)``, by ID, woken by the next job.
        var workWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiterID: UInt64 = 0

        /// The oldest queued job, if any; the storage of those taken is reused.
        mutating func takeJob() -> UnownedJob? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 4096, 2 * head >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private let state = LockedState(State())

    /// Queues `job`, counted as pending until it has run. A drain on the ``SimulationThreads``
    /// is asked for when none is under way: jobs are held in the executor's own list rather
    /// than each given to a dispatch queue, which allocated a block and a closure for every
    /// job, a cost a simulation of thousands of tasks paid millions of times.
    private func schedule(_ job: UnownedJob) {
        let (startDrain, workWaiters) = state.withLock { state -> (Bool, [CheckedContinuation<Bool, Never>]) in
            state.jobs.append(job)
            state.scheduled += 1
            let startDrain = !state.draining
            state.draining = true
            guard !state.workWaiters.isEmpty else { return (startDrain, []) }
            defer { state.workWaiters.removeAll() }
            return (startDrain, Array(state.workWaiters.values))
        }
        for waiter in workWaiters { waiter.resume(returning: true) }
        if startDrain { SimulationThreads.shared.drain(self) }
    }

    /// Runs up to `limit` queued jobs one at a time, oldest first, on one of the ``SimulationThreads``.
    /// Returns `true` if jobs remain (the drain goes on at the thread's next turn for this
    /// executor); otherwise ends the drain and wakes the callers of ``settle()``.
    func runJobs(atMost limit: Int) -> Bool {
        for _ in 0..<limit {
            let next = state.withLock { state -> (job: UnownedJob?, idleWaiters: [CheckedContinuation<Void, Never>]) in
                if let job = state.takeJob() { return (job, []) }
                state.draining = false
                defer { state.settleWaiters.removeAll() }
                return (nil, state.settleWaiters)
            }
            guard let job = next.job else {
                for waiter in next.idleWaiters { waiter.resume() }
                return false
            }
            run(job)
        }
        return true
    }

    /// Runs `job` on this executor (where task executors exist, the only place jobs come from).
    private func run(_ job: UnownedJob) {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// How many jobs have been queued so far: a mark for ``waitForWork(after:grace:)``.
    var scheduledCount: UInt64 { state.withLock { $0.scheduled } }

    /// Whether jobs are waiting or running: `false` once a drain found none left, until the
    /// next job is scheduled.
    var isDraining: Bool { state.withLock { $0.draining } }

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
            let idle = state.withLock { state -> Bool in
                if !state.draining { return true }
                state.settleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension SimulationExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        schedule(UnownedJob(job))
    }
}
