public import FleetAuthCore
public import Foundation

/// A clock that moves only when told to: tests and simulations advance it by hand, and
/// everything sleeping on it wakes when its deadline passes. ``advance(by:)`` moves wall
/// time and uptime together (time passing, the device awake or asleep);
/// ``jumpWallClock(by:)`` moves wall time alone (a user setting the clock).
///
/// <!-- snippet run setup:
/// import FleetAuthDriver
/// let context = DriverAuthorizationContext(vehicleID: "v-42")
/// func makeProvider(_ clock: ManualWallClock) throws -> DriverTokenProvider {
///     let transport = InMemoryTransport(clock: clock, latency: 0.2)
///     let backend = InMemoryTokenBackend(clock: clock, configuration: .init(format: .jwtWithExpirationTimestamp))
///     transport.mount(backend, at: "/token/driver/{vehicleId}")
///     return try DriverTokenProvider(
///         endpoint: TokenEndpoint(url: "https://api.example.com/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp), transport: transport, clock: clock)
/// }
/// -->
/// ```swift
/// let clock = ManualWallClock()
/// let provider = try makeProvider(clock)                  // its transport sleeps 0.2 s
/// async let token = provider.token(for: context)
/// await clock.waitForSleepers(count: 1)
/// clock.advance(by: 0.2)
/// print(try await token)                                  // AuthToken(tok_…, vehicle v-42, …)
/// ```
public final class ManualWallClock: WallClock {
    struct Sleeper {
        /// What waking a sleeper does.
        enum Wake {
            /// Resumes a sleeping task. Resumed exactly once, by whoever takes the sleeper out
            /// of `sleepers` under the lock (an advance, a cancellation): unchecked, as a
            /// checked one costs an allocation per sleep, and a simulation sleeps millions of times.
            case task(UnsafeContinuation<Void, any Error>)
            /// Fires the timeout of a `withTimeout(_:_:)` operation: cancels the operation's
            /// task. No task sleeps for a timeout: a fleet that starts together has a request,
            /// and so a timeout, in flight for every vehicle.
            case timeout(cancelOperation: @Sendable () -> Void)
        }

        let deadline: Date
        let wake: Wake
        /// The `withTimeout(_:_:)` operation this sleeper belongs to, if any.
        var operation: UInt64? = nil
        /// A timeout whose deadline passed while its operation ran, woken by the clock:
        /// it fires only if the operation next sleeps past it.
        var deferred = false

        /// The timeout of `operation` rather than a sleep inside it.
        var isTimeout: Bool {
            if case .timeout = wake { return true }
            return false
        }

        /// Wakes the sleeper: resumes its task, or fires its timeout. Called outside the lock,
        /// after taking the sleeper out of `sleepers` (and, for a timeout, marking it fired).
        func fire() {
            switch wake {
            case .task(let continuation): continuation.resume()
            case .timeout(let cancelOperation): cancelOperation()
            }
        }

        /// Ends the sleep of a cancelled task; a timeout has no task to end.
        func cancel() {
            if case .task(let continuation) = wake { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// The `withTimeout(_:_:)` operation the current task runs for, if any.
    @TaskLocal private static var currentOperation: UInt64?

    struct Watcher {
        let id: UInt64
        let count: Int
        let within: TimeInterval
        let continuation: CheckedContinuation<Void, Never>
    }

    struct State {
        /// Monotonic time, as a date; sleepers' deadlines are on it.
        var now: Date
        /// What has been added to the wall clock alone (a user setting the time).
        var wallOffset: TimeInterval = 0
        /// See ``ManualWallClock/offClockGrace``.
        var offClockGrace: TimeInterval = 5
        /// The state of the clock's random draws (SplitMix64 from a fixed seed).
        var randomState: UInt64 = 0x2545_F491_4F6C_DD1D
        var sleepers: [UInt64: Sleeper] = [:]
        var watchers: [Watcher] = []
        var nextID: UInt64 = 0
        /// Operations the clock woke that have not slept on it again since.
        var runningOperations: Set<UInt64> = []
        /// Operations whose timeout fired and whose `withTimeout(_:_:)` has not returned yet.
        var timedOutOperations: Set<UInt64> = []
        /// The timeout of each operation that has one set: operation to sleeper ID (the
        /// sleeper says whether it is deferred).
        var timeouts: [UInt64: UInt64] = [:]
        /// Operations that have ended and whose `withTimeout(_:_:)` has not returned yet.
        var endedOperations: Set<UInt64> = []
        func sleeperCount(within: TimeInterval) -> Int {
            let horizon = now.addingTimeInterval(within)
            return sleepers.values.filter { !$0.deferred && $0.deadline <= horizon }.count
        }

        /// Whether the earliest deadline is the timeout of a `withTimeout(_:_:)` operation that
        /// does not sleep on the clock: it waits for something the clock does not run (a
        /// completion handler called from `Task {}` or a dispatch queue, a real network), and
        /// moving time to the timeout would fire it before that work had its chance.
        func earliestIsTimeoutOfWorkOffTheClock() -> Bool {
            // One pass for the earliest deadline and the timeouts due then (usually none), so
            // that a simulation's every step over thousands of sleepers allocates nothing.
            var earliest: Date?
            var timeouts: [UInt64] = []
            for sleeper in sleepers.values where !sleeper.deferred {
                if earliest.map({ sleeper.deadline < $0 }) ?? true {
                    earliest = sleeper.deadline
                    timeouts.removeAll()
                }
                if sleeper.deadline == earliest, sleeper.isTimeout, let operation = sleeper.operation {
                    timeouts.append(operation)
                }
            }
            return timeouts.contains { operation in
                !runningOperations.contains(operation)
                    && !sleepers.values.contains { !$0.deferred && !$0.isTimeout && $0.operation == operation }
            }
        }

        /// The deferred timeout of `operation` if a sleep until `deadline` passes it, marked fired.
        mutating func takeTimeout(of operation: UInt64, passedBy deadline: Date) -> Sleeper? {
            guard let id = timeouts[operation], let timeout = sleepers[id], timeout.deferred,
                timeout.deadline < deadline
            else { return nil }
            sleepers[id] = nil
            timeouts[operation] = nil
            timedOutOperations.insert(operation)
            return timeout
        }

        /// Removes the sleeper `id`, and its entry among the timeouts if it is one.
        mutating func removeSleeper(_ id: UInt64) -> Sleeper? {
            guard let sleeper = sleepers.removeValue(forKey: id) else { return nil }
            if let operation = sleeper.operation, timeouts[operation] == id { timeouts[operation] = nil }
            return sleeper
        }

        mutating func takeSatisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
            // Every sleep asks; a simulation has no watchers, and mapping and zipping its
            // empty list was 2 % of a step's floor.
            guard !watchers.isEmpty else { return [] }
            let satisfied = watchers.map { sleeperCount(within: $0.within) >= $0.count }
            let ready = zip(watchers, satisfied).filter(\.1).map(\.0.continuation)
            watchers = zip(watchers, satisfied).filter { !$0.1 }.map(\.0)
            return ready
        }
    }

    let state: LockedState<State>
    /// Where the simulation's tasks run, counted so that ``settle()`` sees when all are suspended.
    let executor = SimulationExecutor()

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

    /// How long, in seconds of real time, ``runToCompletion(horizon:_:)`` and ``run(until:)``
    /// wait for work off the clock (an authorization of your own whose completion comes from
    /// `Task {}` or a dispatch queue, a real network) before they give up, or fire the timeout
    /// of a wait for that work. Default 5 s: such work usually comes back within microseconds,
    /// but a `Task {}` waits for a free thread of the shared pool, which a loaded test run can
    /// keep busy for seconds. It is paid only when nothing comes back: a test of a provider
    /// that never answers may lower it; a test double slower than it needs it raised.
    public var offClockGrace: TimeInterval {
        get { state.withLock { $0.offClockGrace } }
        set { state.withLock { $0.offClockGrace = max(0, newValue) } }
    }

    /// Moves the wall clock alone by `seconds` (negative: back), as a user who sets the
    /// device's time does; uptime and sleepers do not notice.
    public func jumpWallClock(by seconds: TimeInterval) {
        state.withLock { $0.wallOffset += seconds }
    }

    /// Suspends until the clock is advanced past `now + duration`.
    public func sleep(for duration: TimeInterval) async throws {
        try await sleepOnCallersExecutor(for: duration)
    }

    /// ``sleep(for:)`` on the caller's executor: for the in-memory transport, which sleeps
    /// at every request in flight, and saves the public method's hop and frame.
    nonisolated(nonsending) package func sleepOnCallersExecutor(for duration: TimeInterval) async throws {
        try Task.checkCancellation()
        guard duration > 0 else { return }
        try await sleep(for: duration, operation: Self.currentOperation)
    }

    /// On the caller's executor (`nonisolated(nonsending)`): no task switch into it.
    nonisolated(nonsending) private func sleep(for duration: TimeInterval, operation: UInt64?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                enqueue(continuation, as: id, for: duration, operation: operation)
            }
        } onCancel: {
            let sleeper = state.withLock { $0.removeSleeper(id) }
            sleeper?.cancel()
        }
    }

    /// Puts a sleeping task among the sleepers as `id`, `duration` from now (or resumes it
    /// cancelled), and fires what its sleep passes. Not inlined: the closure that calls it
    /// keeps its values in the frame of every sleep in flight.
    @inline(never)
    private func enqueue(
        _ continuation: UnsafeContinuation<Void, any Error>, as id: UInt64, for duration: TimeInterval,
        operation: UInt64?
    ) {
        let woken: (ready: [CheckedContinuation<Void, Never>], timeout: Sleeper?)? = state.withLock { state in
            if Task.isCancelled { return nil }
            let deadline = state.now.addingTimeInterval(duration)
            var timeout: Sleeper?
            if let operation {
                state.runningOperations.remove(operation)
                timeout = state.takeTimeout(of: operation, passedBy: deadline)
            }
            state.sleepers[id] = Sleeper(deadline: deadline, wake: .task(continuation), operation: operation)
            // A deferred timeout that this sleep passes fires now.
            return (state.takeSatisfiedWatchers(), timeout)
        }
        guard let woken else { return continuation.resume(throwing: CancellationError()) }
        woken.timeout?.fire()
        for watcher in woken.ready { watcher.resume() }
    }

    /// Runs `operation`, giving up when the clock passes `seconds` from now, in deadline
    /// order: a sleep inside the operation that ends before the timeout, or as it runs out,
    /// wins over it however far one advance moves the clock. A timeout that passes while the
    /// clock's own wake-up has the operation running fires only if the operation next sleeps past
    /// it; one that passes while the operation waits on anything else fires at once.
    /// The operation runs on the clock's executor, so that ``settle()`` waits for it.
    ///
    /// The operation runs in a task of its own; its timeout is an entry among the sleepers
    /// that, when it fires, cancels that task, which the caller then waits for. The timeout is
    /// set once the operation's first steps have run on the clock's executor, as when it was a
    /// task of its own started after the operation's: an operation that ends without waiting
    /// never has one, however far a test moves the clock meanwhile.
    package func simulatedTimeout<Result: Sendable>(
        _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result? {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let task = startSimulated {
            defer { self.operationEnded(id) }
            return try await Self.$currentOperation.withValue(id) { try await operation() }
        }
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            await withTaskExecutorPreference(taskExecutor) { await Task.yield() }
        } else {
            await Task.yield()
        }
        setTimeout(of: id, after: seconds) { task.cancel() }
        let outcome = await withTaskCancellationHandler {
            await task.result
        } onCancel: {
            task.cancel()
        }
        let timedOut = state.withLock { state in
            state.runningOperations.remove(id)
            state.endedOperations.remove(id)
            return state.timedOutOperations.remove(id) != nil
        }
        return timedOut ? nil : try outcome.get()
    }

    /// Sets the timeout of `operation`, `seconds` from now, unless the operation has ended.
    private func setTimeout(
        of operation: UInt64, after seconds: TimeInterval, cancelOperation: @escaping @Sendable () -> Void
    ) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.endedOperations.contains(operation) else { return [] }
            state.nextID += 1
            state.sleepers[state.nextID] = Sleeper(
                deadline: state.now.addingTimeInterval(max(seconds, 0.000_001)),
                wake: .timeout(cancelOperation: cancelOperation), operation: operation)
            state.timeouts[operation] = state.nextID
            return state.takeSatisfiedWatchers()
        }
        for watcher in ready { watcher.resume() }
    }

    /// Takes away the timeout of `operation`, which has ended, and remembers that it ended.
    private func operationEnded(_ operation: UInt64) {
        state.withLock { state in
            if let timeout = state.timeouts[operation] { _ = state.removeSleeper(timeout) }
            state.endedOperations.insert(operation)
        }
    }

    /// Moves the clock forward by `seconds` and wakes every sleeper whose deadline has
    /// passed, earliest first (see `withTimeout(_:_:)` for timeouts).
    public func advance(by seconds: TimeInterval) {
        let (due, watchers) = state.withLock { state in
            state.now = state.now.addingTimeInterval(max(0, seconds))
            let now = state.now
            var due: [Sleeper] = []
            var timedOut: Set<UInt64> = []
            // Earliest first; of equal deadlines, sleeps before timeouts (a sleep that ends as
            // its operation's time runs out wins over it), then the one that went to sleep
            // first, so that a run wakes sleepers in the same order every time (and a task
            // group's children, woken in the order they were added, finish in that order,
            // which the runtime's bookkeeping of the group handles fastest).
            var passed: [(deadline: Date, isTimeout: Bool, id: UInt64)] = []
            for (id, sleeper) in state.sleepers where !sleeper.deferred && sleeper.deadline <= now {
                passed.append((sleeper.deadline, sleeper.isTimeout, id))
            }
            passed.sort {
                ($0.deadline, $0.isTimeout ? 1 : 0, $0.id) < ($1.deadline, $1.isTimeout ? 1 : 0, $1.id)
            }
            for (_, _, id) in passed {
                guard let sleeper = state.sleepers[id] else { continue }
                if sleeper.isTimeout, let operation = sleeper.operation, state.runningOperations.contains(operation) {
                    state.sleepers[id]?.deferred = true
                    continue
                }
                // An operation whose timeout fired is not woken after it: it is being cancelled.
                if let operation = sleeper.operation, timedOut.contains(operation) { continue }
                if sleeper.isTimeout, let operation = sleeper.operation {
                    timedOut.insert(operation)
                    state.timedOutOperations.insert(operation)
                }
                _ = state.removeSleeper(id)
                if !sleeper.isTimeout, let operation = sleeper.operation { state.runningOperations.insert(operation) }
                due.append(sleeper)
            }
            return (due, state.takeSatisfiedWatchers())
        }
        for sleeper in due { sleeper.fire() }
        for watcher in watchers { watcher.resume() }
    }

    /// Moves the clock forward to the wall time `date` (never backward).
    public func advance(to date: Date) {
        advance(by: date.timeIntervalSince(now()))
    }

    /// How many tasks are sleeping on the clock.
    public var sleeperCount: Int {
        sleeperCount(within: .infinity)
    }

    /// How many tasks are sleeping on the clock with deadlines at most `within` seconds away.
    package func sleeperCount(within: TimeInterval) -> Int {
        state.withLock { $0.sleeperCount(within: within) }
    }

    /// The earliest deadline among the sleepers, if any, in wall time.
    public var nextDeadline: Date? {
        state.withLock { state in
            var earliest: Date?
            for sleeper in state.sleepers.values where !sleeper.deferred {
                if earliest.map({ sleeper.deadline < $0 }) ?? true { earliest = sleeper.deadline }
            }
            return earliest?.addingTimeInterval(state.wallOffset)
        }
    }

    /// Returns once at least `count` tasks are sleeping on the clock with deadlines at
    /// most `within` seconds away, so a test can advance the clock knowing the work it
    /// expects is waiting. `within` tells short sleeps (latency, backoff) apart from long
    /// ones that are also pending (a 15-second request timeout). It waits for as long as
    /// the sleepers take to come, or until the calling task is cancelled (a test's time
    /// limit): prefer ``settle()`` where the clock runs the work.
    public func waitForSleepers(count: Int = 1, within: TimeInterval = .infinity) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || state.sleeperCount(within: within) >= count { return true }
                    state.watchers.append(Watcher(id: id, count: count, within: within, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let watcher = state.withLock { state -> Watcher? in
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.watchers.remove(at: index)
            }
            watcher?.continuation.resume()
        }
    }
}
