/// A transport that answers within this process, with no network between: FleetAuth's
/// in-memory doubles. A call through it costs microseconds, so a caller that gives each call
/// over a network a task of its own (`VehicleReporter`'s updates, whose
/// frames then go when the call ends) makes calls through it in its own task: the task would
/// cost more than the call.
package protocol InProcessTransport: HTTPTransport {}
