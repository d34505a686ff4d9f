/// Everything a ``TokenProvider`` needs: the backend, the transport, the clock and the
/// policies. `DriverTokenProvider.Configuration` names it too.
package struct TokenProviderConfiguration: Sendable {
    /// The token backend.
    package var endpoint: TokenEndpoint
    /// How requests reach it.
    package var transport: any HTTPTransport
    /// Wall time. Inject a manual clock in tests.
    package var clock: any WallClock
    /// Freshness margins and lifetime limits.
    package var refresh: RefreshPolicy
    /// Retries, deadline and cooldown.
    package var retry: RetryPolicy
    /// The audience a token must name and whether wildcard tokens may be used.
    package var rules: TokenRules
    /// The most scopes kept in the cache (default 1,024); one not used since the last
    /// sweep is dropped. Keep it above the number of vehicles or trips served at once.
    package var cacheCapacity: Int
    /// Receives ``TokenEvent``s; `nil` for none.
    package var observer: (@Sendable (TokenEvent) -> Void)?

    /// Creates a configuration with the contract's defaults.
    package init(
        endpoint: TokenEndpoint, transport: any HTTPTransport, clock: any WallClock = SystemWallClock(),
        refresh: RefreshPolicy = RefreshPolicy(), retry: RetryPolicy = RetryPolicy(),
        rules: TokenRules = TokenRules(),
        cacheCapacity: Int = 1024, observer: (@Sendable (TokenEvent) -> Void)? = nil
    ) {
        self.endpoint = endpoint
        self.transport = transport
        self.clock = clock
        self.refresh = refresh
        self.retry = retry
        self.rules = rules
        self.cacheCapacity = cacheCapacity
        self.observer = observer
    }
}
