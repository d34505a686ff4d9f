import Foundation

/// Flights waiting for a slot (``FetchSlots``): their waiters wait at most the retry policy's
/// deadline, the wait for a slot included. One task watches them while any has waiters.
extension TokenEngine {
    /// Starts the task that watches the queued flights' waiters, unless it runs, when the
    /// queued flight of `scope` has waiters.
    func watchQueue(for scope: AuthorizationScope) {
        let starts = state.withLock { state -> Bool in
            guard !state.queueWatched, let flight = state.flights[scope], flight.isQueued, flight.hasCallersWithinBudget
            else { return false }
            state.queueWatched = true
            return true
        }
        guard starts else { return }
        _ = clock.startTask { await self.expireQueuedFlights() }
    }

    /// Fails the waiters of queued flights as their budget runs out, sleeping on the clock
    /// until the next one would; ends once no queued flight has waiters.
    private func expireQueuedFlights() async {
        let budget = configuration.retry.deadline
        while true {
            let now = clock.uptime()
            let (expired, next) = withStateAndPublish { $0.expireQueuedFlights(at: now, budget: budget) }
            for (scope, waiters) in expired {
                let error = Self.noSlot(scope, limit: configuration.concurrentFetchLimit, budget: budget)
                emit(.notSent(scope, error: error, retryIn: nil))
                for waiter in waiters { waiter.resume(with: .failure(error)) }
            }
            if !expired.isEmpty { wakeAnsweredCallers() }
            guard let next else { return }
            do {
                try await clock.sleep(for: next - now)
            } catch {
                state.withLock { $0.queueWatched = false }
                return
            }
        }
    }

    /// The error of callers whose fetch waited for a slot past their budget.
    /// A limit below the default came from the transport (``TokenRequestBoundedTransport``):
    /// the message then names the connections that set it.
    static func noSlot(_ scope: AuthorizationScope, limit: Int, budget: TimeInterval) -> FleetAuthError {
        let setByTransport = limit < TokenProviderConfiguration.defaultConcurrentFetchLimit
        let why = setByTransport ? " (as many as its transport sends to the token backend at once)" : ""
        let more =
            setByTransport
            ? ", give the backend more time with `RetryPolicy(deadline:)`, or let more requests go at once: a session of the app's with a higher `httpMaximumConnectionsPerHost` (`URLSessionTransport(session:)`)"
            : ", or give the backend more time with `RetryPolicy(deadline:)`"
        return FleetAuthError(
            reason: .timedOut,
            message:
                "No token request could start within the retry deadline (\(SpokenDuration.describe(budget))): \(limit) fetches of this provider were making their first attempt\(why), and this one waited its turn behind them. Start a fleet this large in waves (`prefetch(_:)` each wave before it reports)\(more).",
            scope: scope)
    }
}
