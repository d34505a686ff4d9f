package import FleetAuthInMemory
package import Foundation

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension ManualWallClock {
    /// Moves the clock to uptime `target` one sleeper deadline at a time
    /// (``ManualWallClock/run(until:)``).
    package func advanceSettled(to target: TimeInterval) async {
        await run(until: now().addingTimeInterval(target - uptime()))
    }
}
