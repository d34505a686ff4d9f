extension TokenProvider {
    /// The token backend the provider fetches from, as it was made with: for an app that logs
    /// its settings at startup. The `url` is the template as given; to log it, leave out
    /// query items that carry a credential.
    public var endpoint: TokenEndpoint { engine.configuration.endpoint }

    /// The freshness margins, lifetime limits and outage behaviour the provider runs with: the
    /// initializer's `refresh` argument. (Not ``refresh(for:)``, which fetches a token now.)
    public var refreshPolicy: RefreshPolicy { engine.configuration.refresh }

    /// The retries, deadline and cooldown the provider runs with: the initializer's `retry`
    /// argument.
    public var retryPolicy: RetryPolicy { engine.configuration.retry }

    /// The audience, fleet flavor and wildcard rule every token is checked against.
    public var rules: TokenRules { engine.configuration.rules }

    /// The most contexts the cache holds (``TokenStatistics`` counts those dropped while usable).
    public var cacheCapacity: Int { engine.configuration.cacheCapacity }
}
