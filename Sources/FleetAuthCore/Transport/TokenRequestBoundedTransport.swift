/// A transport that sends at most so many requests to a token endpoint at once and queues the
/// rest inside itself, as a URL session does behind its connections per host over HTTP/1.1.
///
/// A provider over it lets no more of its fetches make their first attempt at once
/// (``FetchSlots``): a fetch beyond them would only wait in the transport's queue, holding
/// its tasks, its request and its timeout's alarm, with its attempt's timeout running. Waiting
/// for a slot instead, it is a record, and its attempt's timeout starts when it is sent. A
/// provider over any other transport, or one that does not bound requests to its endpoint, has
/// ``TokenProviderConfiguration/defaultConcurrentFetchLimit`` slots, and never more.
package protocol TokenRequestBoundedTransport: HTTPTransport {
    /// How many requests to `endpoint` the transport sends at once, or `nil` when it does not
    /// bound them (it may carry many on one connection).
    func simultaneousRequests(to endpoint: TokenEndpoint) -> Int?
}
