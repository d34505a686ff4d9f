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

extension SimulationThreadsTests {
    /// A drain stays on the thread where its executor's last turn is ending, and an executor
    /// whose jobs ran out (leaving its list) does not make its thread busy: lost, either race
    /// put a simulation's step on a second thread, and its memory in a second arena.
    @Test func aDrainStaysWhereItsLastTurnEndsAndALeavingClockDoesNotCount() {
        let mine = (isExecutor: true, isDraining: true)
        let leaving = (isExecutor: false, isDraining: false)
        let busy = (isExecutor: false, isDraining: true)
        #expect(SimulationThreads.threadForDrain(lists: [[], [mine]]) == 1)
        #expect(SimulationThreads.threadForDrain(lists: [[busy], [busy, mine]]) == 1)
        #expect(SimulationThreads.threadForDrain(lists: [[leaving], []]) == 0)  // a simulator after its floor
        #expect(SimulationThreads.threadForDrain(lists: [[busy], []]) == 1)
        #expect(SimulationThreads.threadForDrain(lists: [[busy, leaving], [busy]]) == 0)
    }
}
