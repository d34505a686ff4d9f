extension TokenEngine {
    /// A stream of `scope`'s token states (`nil`: every scope's), starting with how each
    /// stands now; see ``TokenProvider/tokenStates(for:)``.
    package func tokenStates(of scope: AuthorizationScope?) -> AsyncStream<TokenState> {
        let (stream, id) = states.subscribe(to: scope)
        let now = clock.uptime()
        if let scope {
            shard(for: scope).withLock { state in states.publish(state.tokenState(of: scope, at: now), to: id) }
        } else {
            for shard in shards {
                shard.withLock { state in
                    for scope in state.knownScopes { states.publish(state.tokenState(of: scope, at: now), to: id) }
                }
            }
        }
        return stream
    }

    /// Fetches tokens for `scopes` that have none fresh, through the same single flight as
    /// every caller, and returns the errors of those that failed.
    package func prefetch(_ scopes: [AuthorizationScope]) async -> [FleetAuthError] {
        var seen = Set<AuthorizationScope>()
        let now = clock.uptime()
        let needed = scopes.filter { scope in
            guard seen.insert(scope).inserted else { return false }
            let freshness = shard(for: scope).withLock { $0.cache.peek(scope)?.freshness(at: now) }
            return freshness != .fresh
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
