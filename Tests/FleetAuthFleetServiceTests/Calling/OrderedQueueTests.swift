import FleetAuthCore
import FleetAuthFleetService
import Testing

@Suite("Ordered queue")
struct OrderedQueueTests {
    @Test func operationsRunOneAtATimeInSubmissionOrder() async throws {
        let queue = OrderedQueue()
        let log = LockedState<[Int]>([])
        let running = LockedState(0)
        let maxRunning = LockedState(0)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    await queue.run {
                        let now = running.withLock {
                            $0 += 1; return $0
                        }
                        maxRunning.withLock { $0 = max($0, now) }
                        for _ in 0..<3 { await Task.yield() }
                        log.withLock { $0.append(index) }
                        running.withLock { $0 -= 1 }
                    }
                }
                // Submit the next operation only once this one has joined the queue.
                while queue.submittedCount <= index { await Task.yield() }
            }
        }
        #expect(log.withLock { $0 } == Array(0..<50))
        #expect(maxRunning.withLock { $0 } == 1)
    }
}
