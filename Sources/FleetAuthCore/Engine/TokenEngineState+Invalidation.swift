import Foundation

/// Invalidation as events on the engine's state: a token the fleet service rejected, and the
/// sign-out that drops everything.
extension TokenEngineState {
    /// The fleet service rejected `tokenValue` for `scope` at uptime `now` (`wallNow` on the
    /// device's clock): the value is remembered (the last four), so that a fetch returning it
    /// fails; if it is the cached token it is dropped and the scope's gate counts the
    /// rejection. Returns whether it was dropped.
    mutating func tokenRejected(
        _ tokenValue: String, for scope: AuthorizationScope, at now: TimeInterval, wallNow: Date, retry: RetryPolicy,
        randomUnit: Double
    ) -> Bool {
        var values = rejected[scope] ?? []
        values.removeAll { $0 == tokenValue }
        values.append(tokenValue)
        if values.count > 4 { values.removeFirst() }
        rejected[scope] = values
        boundPerScopeState()
        guard let token = cache.peek(scope)?.token, token.value == tokenValue else { return false }
        cache.remove(scope)
        // A backend whose fresh tokens keep being rejected is asked less and less often.
        var gate = gates[scope] ?? FetchGate()
        gate.tokenRejected(
            age: wallNow.timeIntervalSince(token.receivedAt), scope: scope, at: now, wallNow: wallNow, retry: retry,
            randomUnit: randomUnit)
        gates[scope] = gate.isEmpty ? nil : gate
        noteChange(of: scope, at: now)
        return true
    }

    /// Signs out: every token, gate, rejected value and flight is dropped, and every scope
    /// held, or followed by a stream (`watched`), stands `signedOut` until the app asks for a
    /// token again. Returns the flights dropped, whose tasks to cancel and callers to fail.
    mutating func signOut(alsoNoting watched: Set<AuthorizationScope>) -> [Flight] {
        // Every reader hears it: of the scopes held, and of those a stream follows.
        let known = knownScopes.union(watched)
        for scope in known { note(TokenState(scope: scope, phase: .signedOut, token: nil)) }
        signedOut = true
        signedOutScopes.formUnion(known)
        let dropped = Array(flights.values)
        cache.removeAll()
        flights.removeAll()
        slots.dropQueue()
        gates.removeAll()
        rejected.removeAll()
        return dropped
    }
}
