import Foundation

/// A delivery vehicle's tasks share its token.
///
/// The delivery driver SDK asks with a task ID for task calls, and a vehicle token whose
/// `authorization` claim names no task covers every task of that vehicle. When the endpoint's
/// request leaves the task out (the sample route `/token/delivery_driver/{vehicleId}`), the
/// backend could only mint a task the vehicle's token again: so a task context is served the
/// vehicle's token, fetched once under the vehicle's scope, whenever that token covers the
/// task. A token whose claims name tasks serves only those; for any other task the engine
/// fetches under the task's own scope, as it does for every task when the request names it.
extension TokenEngine {
    /// The vehicle-wide scope whose token a task context `scope` is served, or `nil` when
    /// `scope` names no task or the request names the task.
    @inline(__always)
    func vehicleScope(sharedBy scope: AuthorizationScope) -> AuthorizationScope? {
        guard tasksShareVehicleTokens, scope.taskID != nil, scope.kind == .vehicle else { return nil }
        return .vehicle(scope.id)
    }

    /// The vehicle's cached token for the task context `scope` if it covers the task and can
    /// be handed out now; the lookup counts and refreshes under the vehicle's scope.
    func cachedVehicleToken(_ vehicle: AuthorizationScope, covering scope: AuthorizationScope, at now: TimeInterval)
        -> AuthToken?
    {
        // The claims are decoded outside the lock.
        guard let held = state.withLock({ $0.cache.peek(vehicle)?.token }), held.claims.covers(scope) else {
            return nil
        }
        let lookup = state.withLock { $0.lookUp(vehicle, at: now) }
        guard let token = completeLookup(lookup, for: vehicle, at: now) else { return nil }
        return token == held || token.claims.covers(scope) ? token : nil
    }

    /// The scope whose token and state a context's lookups and streams follow: the vehicle's
    /// for a task that shares its token, else `scope` itself.
    func servingScope(for scope: AuthorizationScope) -> AuthorizationScope {
        vehicleScope(sharedBy: scope) ?? scope
    }
}
