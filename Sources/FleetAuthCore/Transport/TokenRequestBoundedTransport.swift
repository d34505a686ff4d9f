/// A transport that sends at most so many token requests at once and queues the rest inside
/// itself, as a URL session does behind its connections per host.
///
/// A provider over it lets no more of its fetches make their first attempt at once
/// (``FetchSlots``): a fetch beyond them would only wait in the transport's queue, holding
/// its tasks, its request and its timeout's alarm, with its attempt's timeout running. Waiting
/// for a slot instead, it is a record, and its timeout starts when it is sent. A provider over
/// any other transport has ``TokenProviderConfiguration/unboundedFetchLimit`` slots.
package protocol TokenRequestBoundedTransport: HTTPTransport {
    /// How many token requests the transport sends at once (at least one).
    var simultaneousTokenRequests: Int { get }
}
