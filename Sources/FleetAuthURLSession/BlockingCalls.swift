import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where the transport makes the URLSession calls that can wait: starting and cancelling a
/// data task.
///
/// FoundationNetworking on Linux runs the libcurl work of every URLSession in a process on
/// one serial lane, and `dataTask(with:)`, `resume()` and `cancel()` wait for it; a body that
/// arrives at loopback speed keeps that lane busy for as long as it flows. Cancels, and the
/// starts of token requests (the requests whose answers come from the operator's backend, a
/// few an hour per vehicle), run on two serial queues of their own, each holding at most one
/// thread while it waits: not on a thread of Swift's concurrency pool (as many threads as
/// cores: two waiting calls would stop every task of the process, the fetch's own timeout
/// included), nor on Dispatch's global pool, whose threads also run the guard's callbacks,
/// which must keep dropping what a refused body still sends. Fleet calls start where they are
/// asked to: the hop cost 5 to 28 % more CPU per request over loopback (eight paired runs of
/// 4,000 requests), and a fleet service's answers are the platform's. On Apple platforms every
/// data task starts where it is asked to.
enum BlockingCalls {
    /// The serial queue data tasks start on (FoundationNetworking only).
    private static let starts = DispatchQueue(label: "FleetAuth.URLSessionTransport.starts")
    /// The serial queue data tasks are cancelled on.
    private static let cancels = DispatchQueue(label: "FleetAuth.URLSessionTransport.cancels")

    /// Runs `start`, which makes and resumes a data task: for a token request
    /// (`asksForToken`), where its wait holds no thread that other work needs; else here.
    static func start(asksForToken: Bool, _ start: @escaping @Sendable () -> Void) {
        #if canImport(FoundationNetworking)
            if asksForToken { return starts.async(execute: start) }
        #endif
        start()
    }

    /// Cancels `task` from the queue of cancels; returns at once.
    static func cancel(_ task: URLSessionTask) {
        cancelling { task.cancel() }
    }

    /// Runs `cancel`, a call that cancels a task (FoundationNetworking's answer to a
    /// cancelled challenge cancels its task where it is called), on the queue of cancels;
    /// returns at once.
    static func cancelling(_ cancel: @escaping @Sendable () -> Void) {
        cancels.async(execute: cancel)
    }
}
