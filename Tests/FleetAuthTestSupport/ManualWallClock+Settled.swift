package import FleetAuthInMemory
package import Foundation

/// What a test expected to hold once the clock's work had settled did not hold.
package struct ConditionNeverHeld: Error, CustomStringConvertible {
    /// Where the expectation was.
    package let location: String
    /// `condition did not hold once settled at File.swift:12`.
    package var description: String { "condition did not hold once settled at \(location)" }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension ManualWallClock {
    /// Waits until all the work on the clock is suspended (``ManualWallClock/settle()``), then
    /// returns what `probe` reads: for state that work reaches without time passing. Throws
    /// ``ConditionNeverHeld`` (failing the test) if `probe` finds nothing. It never polls.
    package func settled<T>(
        _ probe: () -> T?, fileID: String = #fileID, line: Int = #line
    ) async throws -> T {
        await settle()
        guard let value = probe() else {
            throw ConditionNeverHeld(location: "\(fileID):\(line)")
        }
        return value
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension ManualWallClock {
    /// Runs `operation` on the clock without moving it (only deadlines already due are met)
    /// and returns its result: for a step a test expects to finish at once. If the step waits
    /// for time to pass, it is cancelled and this throws ``ManualWallClock/Stalled``, failing
    /// the test at once where a plain `await` would hang it until its time limit.
    package func atOnce<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await runToCompletion(horizon: 0, operation).get()
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension ManualWallClock {
    /// Waits until all the work on the clock is suspended, then requires at least `count`
    /// sleepers due within `within` seconds: where ``ManualWallClock/waitForSleepers(count:within:)``
    /// would wait forever for sleepers that never come (a backoff longer than the test
    /// expects), this throws ``ConditionNeverHeld`` at once. For work the clock runs only.
    package func settledSleepers(
        count: Int = 1, within: TimeInterval = .infinity, fileID: String = #fileID, line: Int = #line
    ) async throws {
        try await settled({ sleeperCount(within: within) >= count ? () : nil }, fileID: fileID, line: line)
    }
}

extension ManualWallClock {
    /// Waits for at least `count` sleepers due within `within` seconds that work off the clock
    /// will start (an answer over a real network, then a retry's backoff), for at most
    /// `realTimeLimit` seconds of real time: when they do not come, this throws
    /// ``ConditionNeverHeld`` and the test fails there instead of waiting out its time limit.
    package func sleepersFromOffTheClock(
        count: Int = 1, within: TimeInterval = .infinity, realTimeLimit: TimeInterval = 60,
        fileID: String = #fileID, line: Int = #line
    ) async throws {
        let arrived = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitForSleepers(count: count, within: within)
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(realTimeLimit * 1_000_000_000))
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        guard arrived else { throw ConditionNeverHeld(location: "\(fileID):\(line)") }
    }
}
