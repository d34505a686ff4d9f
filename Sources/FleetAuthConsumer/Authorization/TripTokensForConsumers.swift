/// A ``TripAuthorization`` (a provider ported from the platform's consumer sample, which
/// supplies trips' tokens only) as the ``ConsumerAuthorization`` that ``TripMonitor`` speaks:
/// a trip's context goes to it as a ``TripAuthorizationContext``; a tracking ID or a task,
/// which it cannot supply, fails with `invalidConfiguration` naming what can.
struct TripTokensForConsumers<Trips: TripAuthorization>: ConsumerAuthorization {
    let trips: Trips

    func fetchToken(
        with authorizationContext: ConsumerAuthorizationContext?, completion: @escaping AuthTokenFetchCompletionHandler
    ) {
        do {
            trips.fetchToken(with: try tripContext(authorizationContext), completion: completion)
        } catch {
            completion(nil, error)
        }
    }

    func fetchToken(with authorizationContext: ConsumerAuthorizationContext) async throws -> String {
        try await trips.fetchToken(with: tripContext(authorizationContext))
    }

    func token(for authorizationContext: ConsumerAuthorizationContext) async throws -> AuthToken {
        try await trips.token(for: tripContext(authorizationContext))
    }

    func cachedUsableToken(for authorizationContext: ConsumerAuthorizationContext) -> AuthToken? {
        (try? tripContext(authorizationContext)).flatMap { trips.cachedUsableToken(for: $0) }
    }

    func invalidate(_ token: String, for authorizationContext: ConsumerAuthorizationContext) -> Bool {
        guard let context = try? tripContext(authorizationContext) else { return false }
        return trips.invalidate(token, for: context)
    }

    /// The trip context for `context`; throws for a missing one, a tracking ID or a task.
    private func tripContext(_ context: ConsumerAuthorizationContext?) throws(FleetAuthError)
        -> TripAuthorizationContext
    {
        guard let context else { throw ProviderBridge.missingContext("ConsumerAuthorizationContext") }
        guard context.scope.kind == .trip else {
            throw FleetAuthError(
                reason: .invalidConfiguration,
                message:
                    "\(Trips.self) supplies trips' tokens only (a TripAuthorization), and \(context.scope) is not a trip; give TripMonitor a ConsumerAuthorization that supplies it, such as ConsumerTokenProvider.",
                scope: context.scope)
        }
        return TripAuthorizationContext(tripID: context.scope.id)
    }
}
