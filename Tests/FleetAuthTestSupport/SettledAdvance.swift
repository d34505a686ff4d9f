package import FleetAuthInMemory
package import Foundation

extension ManualWallClock {
    /// Moves the clock to uptime `target` one sleeper deadline at a time
    /// (``ManualWallClock/run(until:)``).
    package func advanceSettled(to target: TimeInterval) async {
        await run(until: now().addingTimeInterval(target - uptime()))
    }
}
