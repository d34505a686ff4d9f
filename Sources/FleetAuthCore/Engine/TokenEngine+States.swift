import Foundation

/// Token states: how a scope stands now, the streams apps follow, and publishing the changes
/// noted under the lock in the order they were noted.
extension TokenEngine {
    /// A stream of `scope`'s token states (`nil`: every scope's), starting with how each
    /// stands now; see ``TokenProvider/tokenStates(for:)``.
    package func tokenStates(of scope: AuthorizationScope?) -> AsyncStream<TokenState> {
        let scope = scope.map(servingScope(for:))
        let (stream, id) = states.subscribe(to: scope)
        let now = clock.uptime()
        publication.lock()
        defer { publication.unlock() }
        // Changes noted before are everyone's news; the states that hold now are the new
        // stream's start.
        let (earlier, current) = state.withLock { state in
            let earlier = state.changes
            state.changes.removeAll()
            state.watched = true
            if state.signedOut, let scope { state.signedOutScopes.insert(scope) }
            for scope in scope.map({ [$0] }) ?? Array(state.knownScopes) {
                state.noteChange(of: scope, at: now)
            }
            defer { state.changes.removeAll() }
            return (earlier, state.changes)
        }
        for change in earlier { states.publish(change.state, sequence: change.sequence) }
        for change in current { states.publish(change.state, sequence: change.sequence, to: id) }
        armPhaseClock()
        return stream
    }

    /// How `scope`'s token stands now, as a token-state stream would say; counts nothing
    /// and starts nothing.
    package func tokenState(of scope: AuthorizationScope) -> TokenState {
        let now = clock.uptime()
        let scope = servingScope(for: scope)
        return state.withLock { $0.tokenState(of: scope, at: now) }
    }

    /// Publishes every token state noted so far and not yet published, in the order noted:
    /// a thread that finds its changes already taken leaves them to the one publishing.
    func publishChanges() {
        publication.lock()
        defer { publication.unlock() }
        let changes = state.withLock { state in
            defer { state.changes.removeAll() }
            return state.changes
        }
        for change in changes { states.publish(change.state, sequence: change.sequence) }
        armPhaseClock()
    }

    /// Sleeps until the next moment a watched scope's state changes by time alone
    /// (``PhaseDeadlines``), then notes the scopes due: one sleep at a time, replaced when an
    /// earlier moment comes. Only while a stream is open: nothing is scheduled before.
    func armPhaseClock() {
        let (armed, replaced) = state.withLock { state -> ((at: TimeInterval, id: UInt64)?, Task<Void, Never>?) in
            guard let next = state.phaseDeadlines.next else { return (nil, nil) }
            if let armed = state.phaseClock, armed.at <= next { return (nil, nil) }
            let id = state.nextID()
            defer { state.phaseClock = (next, id, nil) }
            return ((next, id), state.phaseClock?.task)
        }
        replaced?.cancel()
        guard let armed else { return }
        let clock = self.clock
        let task = clock.startTask { [weak self] in
            try? await clock.sleep(for: armed.at - clock.uptime())
            guard !Task.isCancelled else { return }
            self?.phaseClockRang(armed.id)
        }
        let orphaned = state.withLock { state -> Bool in
            guard state.phaseClock?.id == armed.id else { return true }
            state.phaseClock?.task = task
            return false
        }
        if orphaned { task.cancel() }
    }

    /// Notes the scopes whose state the clock changed, then sleeps until the next moment.
    private func phaseClockRang(_ id: UInt64) {
        let now = clock.uptime()
        withStateAndPublish { state in
            if state.phaseClock?.id == id { state.phaseClock = nil }
            for scope in state.phaseDeadlines.takeDue(at: now) { state.noteChange(of: scope, at: now) }
        }
        armPhaseClock()
    }
}
