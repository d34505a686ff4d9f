import FleetAuthCore
import Foundation
import Testing

/// The lock under every engine's state, contended by more threads than the machine has
/// cores, so that holders are preempted while others wait: no update is lost, and every
/// thread gets through.
@Suite("Locked state: no lost update under contention", .timeLimit(.minutes(10)))
struct LockedStateTests {
    @Test func threadsContendingForOneLockLoseNoUpdate() {
        let threads = 8
        let increments = 50_000
        let counter = LockedState(0)
        let finished = DispatchGroup()
        for _ in 0..<threads {
            finished.enter()
            Thread.detachNewThread {
                for _ in 0..<increments {
                    // A read, a pause and a write: a lost update shows if two threads ever hold it.
                    counter.withLock { value in
                        let read = value
                        if read % 1_000 == 0 { sched_yield() }
                        value = read + 1
                    }
                }
                finished.leave()
            }
        }
        finished.wait()
        #expect(counter.withLock { $0 } == threads * increments)
    }
}
