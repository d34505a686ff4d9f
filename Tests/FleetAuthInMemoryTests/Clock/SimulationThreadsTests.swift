import FleetAuthInMemory
import Testing

@Suite("Simulation threads: where a manual clock's jobs run")
struct SimulationThreadsTests {
    @Test func aDrainGoesToTheFirstIdleThreadOrElseTheLeastBusy() {
        #expect(SimulationThreads.threadForDrain(waiting: [0, 0]) == 0)  // one simulation: always the first
        #expect(SimulationThreads.threadForDrain(waiting: [1, 0]) == 1)
        #expect(SimulationThreads.threadForDrain(waiting: [1, 0, 0]) == 1)
        #expect(SimulationThreads.threadForDrain(waiting: [2, 1]) == 1)
        #expect(SimulationThreads.threadForDrain(waiting: [1, 1]) == 0)
    }
}
