/// A provider that answers every call within a bound of its own, so that a caller need not
/// race it against a deadline of its own (a race costs two tasks for every wait, and a fleet
/// that starts together waits all at once).
///
/// FleetAuth's ``TokenProvider`` is one: a caller gets a token or an error within the retry
/// deadline, since every request, with the app's `headers` closure, is bounded by the
/// endpoint's timeout, and the waiters' budget by the deadline.
package protocol SelfBoundedAuthorization {}

extension TokenProvider: SelfBoundedAuthorization {}
