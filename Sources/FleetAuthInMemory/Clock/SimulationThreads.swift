import Dispatch
import FleetAuthCore
import Foundation

/// The threads that run the jobs of every ``ManualWallClock`` in the process: a drain goes to
/// the thread where its clock's last turn is ending, else to the first idle one, so a process
/// that runs one simulation at a time runs all of it on the first thread.
///
/// A dispatch queue per clock ran each drain on whichever worker thread was free, and glibc
/// gives each thread an arena of its own: a simulation whose steps landed on two workers
/// kept its memory twice, once freed in each arena (100,000 vehicles peaked at 1.0 GB in
/// some runs and 1.65 GB in others of the same binary). On one thread, every step, and the
/// steps of a clock measured before it, allocate from the same arena and reuse what the last
/// freed. Clocks that run at once (tests in parallel) take the next idle thread, of one a core
/// (at least two), and a thread's clocks take turns of at most ``turn`` jobs.
package final class SimulationThreads: Sendable {
    /// The threads every clock's executor drains on, each started at its first drain.
    static let shared = SimulationThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// How many jobs of one clock run before the next clock waiting on the same thread gets a turn.
    static let turn = 256

    private struct State {
        /// Per thread, the executors with jobs to run, in the order they asked.
        var waiting: [[SimulationExecutor]]
        /// Per thread, whether it has been started.
        var started: [Bool]
    }

    /// The thread a drain goes to, given how many executors each has waiting: the first with
    /// none, or else the first of those with the fewest.
    package static func threadForDrain(waiting counts: [Int]) -> Int {
        counts.indices.min { (counts[$0], $0) < (counts[$1], $1) } ?? 0
    }

    /// The thread a drain goes to, given each thread's list (for each executor in it, whether
    /// it is the one to drain and whether it still has jobs): the thread whose list holds the
    /// executor already, where its last turn is ending (a step's jobs that arrive as the last
    /// step's end stay on its thread); else by ``threadForDrain(waiting:)``, counting only
    /// executors with jobs: one whose jobs ran out is leaving, so a clock started as another
    /// ends (a simulator after its floor) takes the thread the other leaves. Either race, lost,
    /// put a step on a second thread, and its memory in a second arena: 1.41 GB instead of
    /// 0.90 for 100,000 vehicles' first minute on a loaded machine.
    package static func threadForDrain(lists: [[(isExecutor: Bool, isDraining: Bool)]]) -> Int {
        lists.firstIndex { list in list.contains { $0.isExecutor } }
            ?? threadForDrain(waiting: lists.map { list in list.count { $0.isDraining } })
    }

    private let state: LockedState<State>
    /// Per thread, signalled once for every executor added to its list.
    private let wake: [DispatchSemaphore]

    private init(count: Int) {
        state = LockedState(
            State(waiting: Array(repeating: [], count: count), started: Array(repeating: false, count: count)))
        wake = (0..<count).map { _ in DispatchSemaphore(value: 0) }
    }

    /// Runs `executor`'s jobs on the thread ``threadForDrain(lists:)`` names.
    func drain(_ executor: SimulationExecutor) {
        let (index, start) = state.withLock { state -> (Int, Bool) in
            let lists = state.waiting.map { list in
                list.map { (isExecutor: $0 === executor, isDraining: $0.isDraining) }
            }
            let index = Self.threadForDrain(lists: lists)
            state.waiting[index].append(executor)
            defer { state.started[index] = true }
            return (index, !state.started[index])
        }
        if start {
            Thread { [self] in
                // Named from the thread itself: set from another, Linux does not apply the
                // name; and it keeps at most 15 bytes of one.
                Thread.current.name = "FleetAuthSim \(index)"
                runForever(index)
            }.start()
        }
        wake[index].signal()
    }

    /// Runs, on thread `index`, a turn of the executor first in its list at each signal,
    /// and puts the executor back at the end of the list while it has jobs left. An executor
    /// stays in the list while it runs, so the thread is not taken for idle meanwhile.
    private func runForever(_ index: Int) -> Never {
        while true {
            wake[index].wait()
            let executor = state.withLock { $0.waiting[index][0] }
            let more = executor.runJobs(atMost: Self.turn)
            state.withLock { state in
                state.waiting[index].removeFirst()
                if more { state.waiting[index].append(executor) }
            }
            if more { wake[index].signal() }
        }
    }
}
