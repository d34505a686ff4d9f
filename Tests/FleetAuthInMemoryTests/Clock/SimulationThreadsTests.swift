import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// The name of the thread running the caller: a synchronous read, which async code may not
/// make of `Thread.current` directly.
private func currentThreadName() -> String {
    Thread.current.name ?? ""
}

@Suite("Simulation threads: a clock's work stays on the clock's own threads")
struct SimulationThreadsTests {
    @Test func everyStepOfASimulationRunsOnASimulationThread() async throws {
        let clock = ManualWallClock()
        var names: [String] = []
        for _ in 0..<20 {
            let name = try await clock.runToCompletion {
                try? await clock.sleep(for: 1)
                return currentThreadName()
            }.get()
            names.append(name)
        }
        // A dispatch worker of the shared pool has no such name (it was where steps ran before).
        #expect(names.allSatisfy { $0.hasPrefix("FleetAuthSim ") }, "\(Set(names))")
    }

    @Test func aDrainGoesToTheFirstIdleThreadOrElseTheLeastBusy() {
        #expect(SimulationThreads.threadForDrain(waiting: [0, 0]) == 0)  // one simulation: always the first
        #expect(SimulationThreads.threadForDrain(waiting: [1, 0]) == 1)
        #expect(SimulationThreads.threadForDrain(waiting: [1, 0, 0]) == 1)
        #expect(SimulationThreads.threadForDrain(waiting: [2, 1]) == 1)
        #expect(SimulationThreads.threadForDrain(waiting: [1, 1]) == 0)
    }
}
