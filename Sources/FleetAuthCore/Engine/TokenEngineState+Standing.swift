import Foundation

/// How a scope stands: the one place a ``TokenState`` is derived from the cache entry, the
/// fetch in flight and the gate, with the moment the clock alone would change it.
extension TokenEngineState {
    /// A scope's token state at a moment, and until when it holds unless something happens.
    struct Standing {
        let state: TokenState
        /// When (uptime) the clock alone has changed the state (a token leaving use, a degraded
        /// token reaching its outage floor), at most a millisecond after it changed: the moment
        /// a stream reads the scope again. `nil` if the clock alone never changes it.
        let until: TimeInterval?
    }

    /// How `scope`'s token stands at uptime `now`, for ``TokenState`` streams.
    func tokenState(of scope: AuthorizationScope, at now: TimeInterval) -> TokenState {
        standing(of: scope, at: now).state
    }

    /// How `scope`'s token stands at uptime `now`, and until when.
    func standing(of scope: AuthorizationScope, at now: TimeInterval) -> Standing {
        let entry = cache.peek(scope)
        let gate = gates[scope]
        let flight = flights[scope]
        // When the next request may go, while the scope is held back and no fetch runs.
        let nextAttemptAt = flight == nil && gate?.allowsRequest(at: now) == false ? gate?.nextRequestDate : nil
        if let failures = gate?.failures {
            // Still handed out: through a transient failure down to the outage floor, through
            // a refusal (a 401 or 403 to the refresh) while it has its minimum life left.
            if let entry, failures.error.isTransient, entry.isAboveFloor(at: now) {
                let state = TokenState(scope: scope, phase: .degraded, token: entry.token, error: failures.error)
                return Standing(state: state, until: entry.floorAt)
            }
            if let entry, !failures.error.isTransient, entry.isInUse(at: now) {
                let state = TokenState(
                    scope: scope, phase: .refreshRefused, token: entry.token, error: failures.error,
                    nextAttemptAt: nextAttemptAt)
                return Standing(state: state, until: entry.endOfUse)
            }
            // No usable token, but callers wait for a fetch with retries left. A refusal has
            // none: a new attempt after it stays `failed` until it ends otherwise.
            if failures.error.isTransient, flight?.hasCallersWithinBudget == true {
                let state = TokenState(scope: scope, phase: .refreshing, token: nil, error: failures.error)
                return Standing(state: state, until: nil)
            }
            let state = TokenState(
                scope: scope, phase: .failed, token: nil, error: failures.failure(at: now), nextAttemptAt: nextAttemptAt
            )
            return Standing(state: state, until: nil)
        }
        let inUse = entry.flatMap { $0.isInUse(at: now) ? $0 : nil }
        if flight != nil {
            let state = TokenState(scope: scope, phase: .refreshing, token: inUse?.token)
            return Standing(state: state, until: inUse?.endOfUse)
        }
        if let inUse {
            return Standing(state: TokenState(scope: scope, phase: .fresh, token: inUse.token), until: inUse.endOfUse)
        }
        if let rejection = gate?.rejection {
            let state = TokenState(
                scope: scope, phase: .failed, token: nil, error: rejection, nextAttemptAt: nextAttemptAt)
            return Standing(state: state, until: nil)
        }
        let state = TokenState(scope: scope, phase: signedOut ? .signedOut : .noToken, token: nil)
        return Standing(state: state, until: nil)
    }
}
