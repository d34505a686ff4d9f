import BenchmarkSubjects
import FleetAuthCore
import FleetAuthInMemory
import Foundation

/// Plays the network in simulations: a background task that, every 50 µs of real time,
/// moves the manual clock to any sleep deadline less than a second away (backend latency),
/// so the simulation loop itself can call the SDK inline at full speed.
final class LatencyDriver: Sendable {
    private let running = Locked(true)
    private let task: Task<Void, Never>

    init(clock: ManualWallClock) {
        let running = self.running
        task = Task.detached {
            while running.withLock({ $0 }) {
                if let next = clock.nextDeadline, next.timeIntervalSince(clock.now()) <= 1 { clock.advance(to: next) }
                try? await Task.sleep(nanoseconds: 50_000)
            }
        }
    }

    func stop() { running.withLock { $0 = false } }
}
