import FleetAuthCore
import FleetAuthFleetService
import Testing

struct LeftTheQueue: Error {}

@Suite("Ordered queue", .timeLimit(.minutes(10)))
struct OrderedQueueTests {
    @Test func operationsRunOneAtATimeInSubmissionOrder() async throws {
        let queue = OrderedQueue()
        let log = LockedState<[Int]>([])
        let running = LockedState(0)
        let maxRunning = LockedState(0)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try? await queue.run(
                        { () async throws(LeftTheQueue) in
                            let now = running.withLock {
                                $0 += 1; return $0
                            }
                            maxRunning.withLock { $0 = max($0, now) }
                            for _ in 0..<3 { await Task.yield() }
                            log.withLock { $0.append(index) }
                            running.withLock { $0 -= 1 }
                        },
                        cancelled: { LeftTheQueue() })
                }
                // Submit the next operation only once this one has joined the queue.
                while queue.submittedCount <= index { await Task.yield() }
            }
        }
        #expect(log.withLock { $0 } == Array(0..<200))
        #expect(maxRunning.withLock { $0 } == 1)
    }

    @Test func aCancelledWaiterLeavesAtOnceAndTheQueueGoesOn() async throws {
        let queue = OrderedQueue()
        let gate = AsyncGate()
        let log = LockedState<[String]>([])
        // The first operation holds the queue until the gate opens.
        let first = Task {
            try await queue.run(
                { () async throws(LeftTheQueue) in
                    await gate.wait()
                    log.withLock { $0.append("first") }
                }, cancelled: { LeftTheQueue() })
        }
        while queue.submittedCount < 1 { await Task.yield() }
        let second = Task {
            try await queue.run(
                { () async throws(LeftTheQueue) in
                    log.withLock { $0.append("second") }
                }, cancelled: { LeftTheQueue() })
        }
        while queue.submittedCount < 2 { await Task.yield() }
        second.cancel()
        // It leaves while the first still holds the queue, without running.
        await #expect(throws: LeftTheQueue.self) { try await second.value }
        let third = Task {
            try await queue.run(
                { () async throws(LeftTheQueue) in
                    log.withLock { $0.append("third") }
                }, cancelled: { LeftTheQueue() })
        }
        while queue.submittedCount < 3 { await Task.yield() }
        gate.open()
        try await first.value
        try await third.value
        #expect(log.withLock { $0 } == ["first", "third"])
    }

    @Test func aTaskCancelledBeforeItQueuesDoesNotRun() async throws {
        let queue = OrderedQueue()
        let ran = LockedState(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await queue.run(
                { () async throws(LeftTheQueue) in
                    ran.withLock { $0 = true }
                }, cancelled: { LeftTheQueue() })
        }
        await #expect(throws: LeftTheQueue.self) { try await task.value }
        #expect(!ran.withLock { $0 })
        // The queue is free for the next one.
        let after = Task {
            try await queue.run({ () async throws(LeftTheQueue) in "ran" }, cancelled: { LeftTheQueue() })
        }
        #expect(try await after.value == "ran")
    }
}

/// A one-shot gate: `wait()` suspends until `open()`.
final class AsyncGate: Sendable {
    private let state = LockedState<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
