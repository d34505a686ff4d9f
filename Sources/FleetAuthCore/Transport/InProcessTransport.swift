/// A transport that answers within this process, with no network between: FleetAuth's
/// in-memory doubles. A caller that gives each call over a network a task of its own, so that
/// the call's frames go when it ends (`VehicleReporter`'s updates), makes calls through it in
/// its own task: there the task would cost a third of the call.
package protocol InProcessTransport: HTTPTransport {}
