public import FleetAuthCore
public import Foundation

/// A clock that moves only when told to: tests and simulations advance it by hand, and
/// everything sleeping on it wakes when its deadline passes. ``advance(by:)`` moves wall
/// time and uptime together (time passing, the device awake or asleep);
/// ``jumpWallClock(by:)`` moves wall time alone (a user setting the clock).
///
/// ```swift
/// let clock = ManualWallClock()
/// async let token = provider.fetchToken(with: context)   // transport sleeps 0.2 s
/// await clock.waitForSleepers(count: 1)
/// clock.advance(by: 0.2)
/// ```
public final class ManualWallClock: WallClock {
    private struct Sleeper {
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        let count: Int
        let within: TimeInterval
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        /// Monotonic time, as a date; sleepers' deadlines are on it.
        var now: Date
        /// What has been added to the wall clock alone (a user setting the time).
        var wallOffset: TimeInterval = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var watchers: [Watcher] = []
        var nextID: UInt64 = 0

        func sleeperCount(within: TimeInterval) -> Int {
            let horizon = now.addingTimeInterval(within)
            return sleepers.values.filter { $0.deadline <= horizon }.count
        }

        mutating func takeSatisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
            let satisfied = watchers.map { sleeperCount(within: $0.within) >= $0.count }
            let ready = zip(watchers, satisfied).filter(\.1).map(\.0.continuation)
            watchers = zip(watchers, satisfied).filter { !$0.1 }.map(\.0)
            return ready
        }
    }

    private let state: LockedState<State>

    /// Creates a clock showing `now` (default 2027-01-15 08:00:00 UTC).
    public init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = LockedState(State(now: now))
    }

    /// The clock's current wall time.
    public func now() -> Date {
        state.withLock { $0.now.addingTimeInterval($0.wallOffset) }
    }

    /// The clock's monotonic time: moved by ``advance(by:)``, never by
    /// ``jumpWallClock(by:)``.
    public func uptime() -> TimeInterval {
        state.withLock { $0.now.timeIntervalSince1970 }
    }

    /// Moves the wall clock alone by `seconds` (negative: back), as a user who sets the
    /// device's time does; uptime and sleepers do not notice.
    public func jumpWallClock(by seconds: TimeInterval) {
        state.withLock { $0.wallOffset += seconds }
    }

    /// Suspends until the clock is advanced past `now + duration`.
    public func sleep(for duration: TimeInterval) async throws {
        try Task.checkCancellation()
        guard duration > 0 else { return }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: [CheckedContinuation<Void, Never>]? = state.withLock { state in
                    if Task.isCancelled { return nil }
                    state.sleepers[id] = Sleeper(
                        deadline: state.now.addingTimeInterval(duration), continuation: continuation)
                    return state.takeSatisfiedWatchers()
                }
                guard let ready else { return continuation.resume(throwing: CancellationError()) }
                for watcher in ready { watcher.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `seconds` and wakes every sleeper whose deadline has
    /// passed, earliest first.
    public func advance(by seconds: TimeInterval) {
        let (due, watchers) = state.withLock { state in
            state.now = state.now.addingTimeInterval(max(0, seconds))
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return (due.values.sorted { $0.deadline < $1.deadline }, state.takeSatisfiedWatchers())
        }
        for sleeper in due { sleeper.continuation.resume() }
        for watcher in watchers { watcher.resume() }
    }

    /// Moves the clock forward to the wall time `date` (never backward).
    public func advance(to date: Date) {
        advance(by: date.timeIntervalSince(now()))
    }

    /// How many tasks are sleeping on the clock.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// The earliest deadline among the sleepers, if any, in wall time.
    public var nextDeadline: Date? {
        state.withLock { state in state.sleepers.values.map(\.deadline).min()?.addingTimeInterval(state.wallOffset) }
    }

    /// Returns once at least `count` tasks are sleeping on the clock with deadlines at
    /// most `within` seconds away, so a test can advance the clock knowing the work it
    /// expects is waiting. `within` tells short sleeps (latency, backoff) apart from long
    /// ones that are also pending (a 15-second request timeout).
    public func waitForSleepers(count: Int = 1, within: TimeInterval = .infinity) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleeperCount(within: within) >= count { return true }
                state.watchers.append(Watcher(count: count, within: within, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
