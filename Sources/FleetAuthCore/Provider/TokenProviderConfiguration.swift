/// Everything a ``TokenProvider`` and its engine need: the arguments of the provider's
/// initializer, documented there.
package struct TokenProviderConfiguration: Sendable {
    package var endpoint: TokenEndpoint
    package var transport: any HTTPTransport
    package var clock: any WallClock
    package var refresh: RefreshPolicy
    package var retry: RetryPolicy
    package var rules: TokenRules
    package var cacheCapacity: Int
    /// How many fetches may be making their first attempt at once (``FetchSlots``); more wait
    /// their turn in the order they came. What the transport sends to the endpoint at once
    /// when it says (``TokenRequestBoundedTransport``), at most ``defaultConcurrentFetchLimit``.
    package var concurrentFetchLimit: Int
    package var observer: (@Sendable (TokenEvent) -> Void)?
    /// Runs on the publishing thread before each token state goes out to the streams: a
    /// seam for tests that hold one publication while another thread notes a change.
    package var beforePublishingState: (@Sendable (TokenState) -> Void)? = nil

    package init(
        endpoint: TokenEndpoint, transport: any HTTPTransport, clock: any WallClock = SystemWallClock(),
        refresh: RefreshPolicy = RefreshPolicy(), retry: RetryPolicy = RetryPolicy(),
        rules: TokenRules = TokenRules(),
        cacheCapacity: Int = 131_072, observer: (@Sendable (TokenEvent) -> Void)? = nil
    ) {
        self.endpoint = endpoint
        self.transport = transport
        self.clock = clock
        self.refresh = refresh
        self.retry = retry
        self.rules = rules
        self.cacheCapacity = cacheCapacity
        self.observer = observer
        let transportLimit = (transport as? any TokenRequestBoundedTransport)?.simultaneousRequests(to: endpoint)
        self.concurrentFetchLimit = min(Self.defaultConcurrentFetchLimit, transportLimit ?? .max)
    }

    /// The most fetches that may make their first attempt at once, and the limit through a
    /// transport that does not bound its requests to the endpoint: far above what a phone or
    /// a test reaches.
    package static let defaultConcurrentFetchLimit = 4096
}
