import Foundation

/// A token provider for one kind of context.
///
/// The driver module names it `DriverTokenProvider` (vehicle contexts) and the consumer
/// module `ConsumerTokenProvider` (trip contexts); each conforms to its side's protocol.
/// It fetches tokens from the operator's backend, validates them, caches them per
/// context and refreshes them ahead of expiry.
public final class TokenProvider<Context: AuthorizationContext>: TokenAuthorization {
    /// The engine doing the work. Our own modules and tests reach it; apps use the
    /// provider's methods.
    @usableFromInline
    package let engine: TokenEngine

    /// Creates a provider from a full engine configuration; throws as the public init does.
    package init(configuration: TokenProviderConfiguration) throws(FleetAuthError) {
        try configuration.endpoint.validate(for: Context.declaredScopeKinds)
        self.engine = try TokenEngine(configuration: configuration)
    }

    /// Creates a provider; throws `invalidConfiguration` for unusable policies (naming the
    /// setting and its bound, such as a `minimumRemainingLifetime` no accepted token keeps),
    /// a token URL that is not an absolute http(s) URL, a URL template this provider's
    /// contexts cannot fill, or plain `http` to a remote host without the opt-in.
    ///
    /// - Parameters:
    ///   - endpoint: The token backend.
    ///   - transport: How requests reach it (`URLSessionTransport`, or a test double).
    ///   - clock: Wall time and a monotonic clock. Inject a manual clock in tests.
    ///   - refresh: Freshness margins, lifetime limits and what happens during outages.
    ///   - retry: Retries, deadline and cooldown.
    ///   - rules: The audience a token must name, the fleet flavor, and whether wildcard
    ///     tokens may be used.
    ///   - cacheCapacity: The most contexts kept in the cache (default 131,072: a simulator of
    ///     100,000 vehicles fits; memory is spent per context in use, about 1 KiB with its
    ///     token). Past it, the context stored longest ago is dropped, and each time its token
    ///     was still usable an `evictedUsable` event at warning level says to raise it.
    ///   - observer: Receives each ``TokenEvent``, for logs and metrics; `nil` for none.
    /// - Throws: ``FleetAuthError`` with code `invalidConfiguration`, naming the setting to fix.
    public convenience init(
        endpoint: TokenEndpoint, transport: any HTTPTransport, clock: any WallClock = SystemWallClock(),
        refresh: RefreshPolicy = RefreshPolicy(), retry: RetryPolicy = RetryPolicy(), rules: TokenRules = TokenRules(),
        cacheCapacity: Int = 131_072, observer: (@Sendable (TokenEvent) -> Void)? = nil
    ) throws(FleetAuthError) {
        try self.init(
            configuration: TokenProviderConfiguration(
                endpoint: endpoint, transport: transport, clock: clock, refresh: refresh, retry: retry, rules: rules,
                cacheCapacity: cacheCapacity, observer: observer))
    }

    /// Calls `completion` exactly once, asynchronously, with a token value or a
    /// ``FleetAuthError`` (`invalidContext` for a `nil` context). It completes even if
    /// the provider is released while the fetch runs.
    public func fetchToken(with authorizationContext: Context?, completion: @escaping AuthTokenFetchCompletionHandler) {
        let engine = self.engine
        ProviderBridge.complete(completion, on: engine.clock) {
            try await Self.fetch(authorizationContext, from: engine).value
        }
    }

    /// A token value for the context. A cached token is returned without suspending and
    /// without leaving the caller's executor (a `@MainActor` caller stays on the main thread).
    @inlinable @inline(__always)
    nonisolated(nonsending) public func fetchToken(with authorizationContext: Context) async throws -> String {
        // Inlinable so that apps get it specialized for their context type: this is the call
        // made at every location update.
        if let value = engine.cachedUsableToken(for: authorizationContext.scope)?.value { return value }
        return try await engine.token(for: authorizationContext.scope).value
    }

    /// The token with its expiry and claims, for callers that need more than the value.
    @inlinable @inline(__always)
    nonisolated(nonsending) public func token(for authorizationContext: Context) async throws -> AuthToken {
        if let token = engine.cachedUsableToken(for: authorizationContext.scope) { return token }
        return try await engine.token(for: authorizationContext.scope)
    }

    /// The cached token for the context if it can be handed out now (fresh, or stale with
    /// a background refresh started); `nil` when a caller would have to wait for a fetch.
    /// Never suspends: for callers that must not.
    @inlinable
    public func cachedUsableToken(for authorizationContext: Context) -> AuthToken? {
        engine.cachedUsableToken(for: authorizationContext.scope)
    }

    /// Drops `token` because the fleet service rejected it (401/403), if it is still the
    /// cached one (a late rejection of an older token causes no second refetch); a later
    /// fetch that returns the same value fails with a `tokenMismatch` that says so. The first
    /// token rejected is replaced at the next call; when the next one is rejected too within a
    /// minute of arriving (the backend mints tokens the service refuses), calls get a
    /// `tokenMismatch` without a request for twice ``RetryPolicy/failureCooldown``, then twice
    /// as long after each further one, up to 5 minutes (±10 %), until a token lives to its
    /// refresh, ``refresh(for:)`` or ``invalidateAll()``.
    /// - Returns: whether the cached token was dropped.
    @discardableResult
    public func invalidate(_ token: String, for authorizationContext: Context) -> Bool {
        engine.invalidate(token, for: authorizationContext.scope)
    }

    /// Fetches a new token for the context now, whatever the cache holds, and returns it: the
    /// fetch in flight if one runs (a background refresh), else a new one. For an app that
    /// needs a token minted after some moment (new claims after a role change, a test that
    /// wants a second token). The cached token is still handed out to other callers until the
    /// new one arrives, and is kept if the fetch fails; this then throws its error, after the
    /// retry policy's attempts and deadline when the backend is down, and never returns the
    /// cached token as if it were new. To drop a
    /// token the fleet service refused, use ``invalidate(_:for:)``, which also makes sure the
    /// refused value does not come back. It asks at once even while the context is held back
    /// after refusals (``TokenState/nextAttemptAt``), and starts that backoff over: call it
    /// when the app knows the credential was renewed.
    public func refresh(for authorizationContext: Context) async throws -> AuthToken {
        try await engine.refreshedToken(for: authorizationContext.scope)
    }

    /// Drops every token, in-flight fetch, cooldown and backoff: call it on sign-out.
    ///
    /// Callers waiting for a fetch get `signedOut`, and every context's token state is
    /// `signedOut` until the app next asks for a token. So at sign-out, first stop what asks
    /// for tokens (reporters, monitors) and make the endpoint's `headers` closure stop
    /// returning the old credential (clear it where the closure reads it: it then throws,
    /// and no request is sent), then call this. At sign-in, store the new credential, then
    /// ask for a token (``token(for:)``, ``prefetch(_:)``, or start reporting): the states
    /// leave `signedOut`. A token asked for while the closure still returns the old
    /// credential is fetched with it.
    public func invalidateAll() {
        engine.invalidateAll()
    }

    /// Fetches tokens ahead of need for `contexts` (a shift's vehicle, a trip, the next
    /// tasks), so the first call for each finds one cached.
    ///
    /// The provider refreshes a token only when a lookup finds it in its refresh window;
    /// with nobody looking up, nothing runs on a timer and the token expires. Call this when
    /// a caller will need a token at a known moment, or looks up too rarely to start the
    /// refresh itself.
    ///
    /// A context whose token is fresh costs nothing; the others share the single fetch in
    /// flight with every other caller. Failures do not throw: they are returned, emitted as
    /// ``TokenEvent``s and delivered to ``tokenStates(for:)``. Returns when every fetch has
    /// ended; call it from a task of its own not to wait.
    /// - Returns: the errors of the contexts whose fetch failed, one per context.
    @discardableResult
    public func prefetch(_ contexts: [Context]) async -> [FleetAuthError] {
        await engine.prefetch(contexts.map(\.scope))
    }

    /// The states of the context's token as they change, starting with how it stands now:
    /// for a screen that shows whether tracking can go on (`noToken`, `fresh`, `refreshing`,
    /// `degraded` while the backend fails, `refreshRefused` while the held token still serves,
    /// `failed`, `signedOut`: ``TokenState/Phase``). Never the token's value.
    ///
    /// A state is delivered once per change, in order; a slow reader gets the newest 64.
    /// The stream ends when the provider is released, or when the reader stops.
    public func tokenStates(for context: Context) -> AsyncStream<TokenState> {
        engine.tokenStates(of: context.scope)
    }

    /// The states of every context's token as they change, starting with those the provider
    /// holds now; as ``tokenStates(for:)``.
    public func tokenStates() -> AsyncStream<TokenState> {
        engine.tokenStates(of: nil)
    }

    /// Ends the token-state streams: nothing will change any more.
    deinit {
        engine.states.finish()
    }

    /// Counts of what the provider has done so far, and what it holds now.
    public var statistics: TokenStatistics { engine.statistics }

    /// How the context's token stands now: the value ``tokenStates(for:)`` would deliver
    /// next. Unlike a lookup it counts nothing, feeds nothing and starts no refresh, and it
    /// reports a token below the minimum remaining lifetime (degraded or failed) too: for
    /// tests and screens that look at a moment.
    public func tokenState(for context: Context) -> TokenState {
        engine.tokenState(of: context.scope)
    }

    /// Returns once no fetch is in flight, background refreshes and their retries included:
    /// for orderly shutdown, and for tests that want every request made. During an outage
    /// a refresh keeps retrying while its token is usable, so this may wait for minutes;
    /// a simulation that wants its own lookups answered calls ``waitUntilCallersAnswered()``.
    public func waitUntilIdle() async {
        await engine.waitUntilIdle()
    }

    /// Returns once no caller waits for a fetch: every lookup has its token or its error.
    /// Background refreshes (and their retries during an outage) may still run: use it
    /// between the steps of a simulation; ``statistics``' `activeFetches` says what runs.
    public func waitUntilCallersAnswered() async {
        await engine.waitUntilCallersAnswered()
    }

    /// The token for `context`, or `missingContext` when there is none. Static, so the
    /// completion path captures the engine rather than the provider.
    @inlinable
    nonisolated(nonsending) static func fetch(_ context: Context?, from engine: TokenEngine) async throws -> AuthToken {
        guard let context else { throw ProviderBridge.missingContext(String(describing: Context.self)) }
        return try await engine.token(for: context.scope)
    }
}
