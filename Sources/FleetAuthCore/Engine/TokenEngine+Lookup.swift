import Foundation

/// Getting tokens: the lookup that serves a cached token without suspending, the wait for
/// the shared fetch, a forced refresh and prefetching.
extension TokenEngine {
    /// A token for `scope`: a usable cached one at once, without suspending or leaving the
    /// caller's executor; otherwise from the shared fetch. Throws ``FleetAuthError``, or
    /// `CancellationError` when the caller is cancelled while waiting (the fetch goes on).
    @usableFromInline
    nonisolated(nonsending) package func token(for scope: AuthorizationScope) async throws -> AuthToken {
        if let token = cachedUsableToken(for: scope) { return token }
        // The scope is checked, and whether it shares its vehicle's token decided, in functions
        // that do not suspend: this frame, which every caller waiting for a fetch holds, keeps
        // neither their error's room nor the vehicle's scope.
        let scope = try Self.checked(scope)
        if sharesItsVehicleToken(scope) { return try await tokenSharedWithVehicle(for: scope) }
        return try await waitForFetch(scope)
    }

    /// `scope`, validated; throws the ``FleetAuthError`` that names what is wrong with it.
    @inline(never)
    private static func checked(_ scope: AuthorizationScope) throws -> AuthorizationScope {
        try scope.validated()
    }

    /// Whether the task `scope`'s request would be its vehicle's.
    @inline(never)
    private func sharesItsVehicleToken(_ scope: AuthorizationScope) -> Bool {
        vehicleScope(sharedBy: scope) != nil
    }

    /// ``token(for:sharedWith:)`` for a task scope that shares its vehicle's token.
    @inline(never)
    private func tokenSharedWithVehicle(for scope: AuthorizationScope) async throws -> AuthToken {
        guard let vehicle = vehicleScope(sharedBy: scope) else { return try await waitForFetch(scope) }
        return try await token(for: scope, sharedWith: vehicle)
    }

    /// A token for the task `scope` whose request would be `vehicle`'s: the vehicle's token
    /// if it covers the task, else the task's own. A function of its own, so that the frame
    /// of every other wait does not hold its values.
    @inline(never)
    private func token(for scope: AuthorizationScope, sharedWith vehicle: AuthorizationScope) async throws
        -> AuthToken
    {
        let token = try await token(for: vehicle)
        if token.claims.covers(scope) { return token }
        return try await waitForFetch(scope)
    }

    /// A new token for `scope`, whatever the cache holds: joins the fetch in flight, or
    /// starts one. The cached token stays in use for other callers until the new one
    /// arrives; if the fetch fails, this throws and the cached token is kept.
    package func refreshedToken(for scope: AuthorizationScope) async throws -> AuthToken {
        let scope = servingScope(for: try scope.validated())
        // Asked by the app: any backoff starts over.
        withStateAndPublish { $0.gates[scope]?.restart() }
        return try await waitForFetch(scope, forced: true)
    }

    /// The cached token for `scope` if it can be handed out now (fresh; stale with a
    /// background refresh started; or degraded, above its outage floor while the backend
    /// fails for a transient reason); `nil` when a caller would have to wait for a fetch.
    /// Never suspends: for callers that must not. Invalid scopes simply miss.
    /// Not inlined: the frame of a caller that waits for a fetch would hold its values.
    @usableFromInline @inline(never)
    package func cachedUsableToken(for scope: AuthorizationScope) -> AuthToken? {
        let now = clock.uptime()
        if let vehicle = vehicleScope(sharedBy: scope),
            let token = cachedVehicleToken(vehicle, covering: scope, at: now)
        {
            return token
        }
        let lookup = state.withLock { $0.lookUp(scope, at: now) }
        return completeLookup(lookup, for: scope, at: now)
    }

    /// Emits the events of a lookup, starts the refresh it claimed, and returns its token.
    func completeLookup(_ lookup: TokenEngineState.Lookup, for scope: AuthorizationScope, at now: TimeInterval)
        -> AuthToken?
    {
        switch lookup {
        case .fresh(let token):
            emit(.servedFresh(scope, fingerprint: token.fingerprint))
            return token
        case .stale(let token, let refresh):
            startRefresh(refresh, for: scope)
            emit(.servedStale(scope, fingerprint: token.fingerprint))
            return token
        case .degraded(let token, let reason, let refresh):
            startRefresh(refresh, for: scope)
            emit(
                .servedDegraded(
                    scope, fingerprint: token.fingerprint, remaining: remaining(token, at: now), reason: reason))
            return token
        case .miss:
            return nil
        }
    }

    private func startRefresh(_ flightID: UInt64?, for scope: AuthorizationScope) {
        guard let flightID else { return }
        emit(.refreshScheduled(scope))
        launch(flight: flightID, for: scope)
    }

    /// Seconds of life `token` has left at uptime `now`.
    func remaining(_ token: AuthToken, at now: TimeInterval) -> TimeInterval {
        (token.expiresAtUptime ?? token.expiresAt.timeIntervalSince1970) - now
    }

    /// Fetches tokens for `scopes` that have none fresh, through the same single flight as
    /// every caller, and returns the errors of those that failed.
    package func prefetch(_ scopes: [AuthorizationScope]) async -> [FleetAuthError] {
        let now = clock.uptime()
        let needed = Set(scopes).filter { scope in
            state.withLock { $0.cache.peek(scope)?.freshness(at: now) } != .fresh
        }
        return await withTaskGroup(of: FleetAuthError?.self) { group in
            for scope in needed {
                group.addTask {
                    do {
                        _ = try await self.token(for: scope)
                        return nil
                    } catch let error as FleetAuthError {
                        return error
                    } catch {
                        return nil  // cancelled: the fetch goes on for other callers
                    }
                }
            }
            var failures: [FleetAuthError] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
    }
}
