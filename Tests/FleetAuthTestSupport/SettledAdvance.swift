public import FleetAuthInMemory
public import Foundation

extension ManualWallClock {
    /// Moves the clock to uptime `target` one sleeper deadline at a time (deadlines within
    /// 0.1 s of each other together), letting the tasks each step wakes run until the
    /// clock's sleepers and `transport`'s requests stop changing, so background work
    /// (retries, refreshes) happens at its own moments rather than all at `target`.
    package func advanceSettled(to target: TimeInterval, watching transport: InMemoryTransport) async {
        await settle(transport)
        while let next = nextDeadline, next.timeIntervalSince1970 <= target {
            advance(by: min(next.timeIntervalSince1970 + 0.1, target) - uptime())
            await settle(transport)
        }
        if target > uptime() { advance(by: target - uptime()) }
        await settle(transport)
    }

    /// Yields until what the clock and transport show has not changed for a few yields.
    private func settle(_ transport: InMemoryTransport) async {
        var last = (sleeperCount, nextDeadline, transport.requestCount)
        var quiet = 0
        for _ in 0..<5_000 where quiet < 8 {
            await Task.yield()
            let now = (sleeperCount, nextDeadline, transport.requestCount)
            if now == last { quiet += 1 } else { (last, quiet) = (now, 0) }
        }
    }
}
