import Foundation

/// Flights and their slots (``FetchSlots``) as events on the engine's state: a flight admitted
/// or queued, a slot freed for the next queued flight, queued callers whose budget ran out.
extension TokenEngineState {
    /// Gives flight `flightID` a slot (`true`: its task is counted running from now), or
    /// queues it until one is free (`false`).
    mutating func admit(flight flightID: UInt64, for scope: AuthorizationScope) -> Bool {
        if slots.admit(flightID, for: scope) {
            runningTasks += 1
            return true
        }
        if flights[scope]?.id == flightID { flights[scope]?.stage = .queued }
        return false
    }

    /// Frees flight `flightID`'s slot if it holds one: the queued flight to start in it, if
    /// one still waits (queued flights that ended meanwhile are passed over), counted
    /// running from now, so that the engine is never idle in between.
    mutating func releaseSlot(of flightID: UInt64) -> FetchSlots.Queued? {
        guard slots.release(flightID) else { return nil }
        while let next = slots.nextQueued() {
            guard flights[next.scope]?.id == next.flightID, flights[next.scope]?.isQueued == true else { continue }
            flights[next.scope]?.stage = .running(afterQueue: true)
            slots.occupy(next.flightID)
            runningTasks += 1
            return next
        }
        return nil
    }

    /// Fails the queued flights whose waiters' budget (`budget` from their first waiter)
    /// has run out at `now`: their waiters, to fail, and the next such moment, if any
    /// queued flight has waiters (otherwise nobody needs to watch the queue any more).
    mutating func expireQueuedFlights(at now: TimeInterval, budget: TimeInterval)
        -> (expired: [(AuthorizationScope, [Flight.Waiter])], next: TimeInterval?)
    {
        var expired: [(AuthorizationScope, [Flight.Waiter])] = []
        var next: TimeInterval?
        for queued in slots.queued {
            guard let flight = flights[queued.scope], flight.id == queued.flightID, flight.isQueued,
                flight.hasCallersWithinBudget
            else { continue }
            let deadline = flight.callersDeadline(budget)
            if deadline <= now {
                expired.append((queued.scope, Array(flight.waiters.values)))
                flights[queued.scope] = nil
                noteChange(of: queued.scope, at: now)
            } else {
                next = min(next ?? deadline, deadline)
            }
        }
        queueWatched = next != nil
        return (expired, next)
    }
}
