import FleetAuthCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One send: what its data task is made from, its caller and the task, so that cancellation,
/// which may arrive before the task is made, while it is made, or after, always answers the
/// caller at once and reaches the task. The task is made where ``BlockingCalls`` starts tasks.
final class DataTaskBox: @unchecked Sendable {
    // Safe because `continuation`, `task` and `cancelled` are only read and written while
    // `lock` is held, and every other property is set once in init.
    private let lock = NSLock()
    /// The caller, until its task is made and followed by the guard, or it is cancelled.
    private var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
    private var task: URLSessionDataTask?
    private var cancelled = false
    private let request: TransportRequest
    private let urlRequest: URLRequest
    private let session: URLSession
    private let requestGuard: RequestGuard
    private let cap: Int
    private let delivery: RequestGuard.BodyDelivery

    /// A send of `request`, as `urlRequest`, through `session`, whose delegate is
    /// `requestGuard`, with a body of at most `cap` bytes reaching it by `delivery`.
    init(
        request: TransportRequest, urlRequest: URLRequest, session: URLSession, requestGuard: RequestGuard, cap: Int,
        delivery: RequestGuard.BodyDelivery
    ) {
        self.request = request
        self.urlRequest = urlRequest
        self.session = session
        self.requestGuard = requestGuard
        self.cap = cap
        self.delivery = delivery
    }

    /// Keeps `continuation` as the caller and starts the task where ``BlockingCalls`` starts
    /// tasks; answers it with `CancellationError` at once when the send was cancelled already.
    func begin(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        let cancelled = lock.withLock {
            if !self.cancelled { self.continuation = continuation }
            return self.cancelled
        }
        if cancelled { return continuation.resume(throwing: CancellationError()) }
        BlockingCalls.start(asksForToken: request.asksForToken) { self.start() }
    }

    /// The completion handler of a task whose body comes whole: hands what it received to the
    /// guard. It runs after `start` made and resumed the task.
    @Sendable func finish(data: Data?, response: URLResponse?, error: (any Error)?) {
        guard let task = lock.withLock({ task }) else { return }
        requestGuard.finish(task, data: data, response: response, error: error)
    }

    /// Makes the task, hands it and the caller to the guard, and resumes it; nothing when the
    /// send was cancelled first. The box keeps the caller while the task is made (on Linux it
    /// can wait for FoundationNetworking's lane), so that a cancel meanwhile answers it at once.
    private func start() {
        guard lock.withLock({ !cancelled }) else { return }
        let task =
            switch delivery {
            case .streamed: session.dataTask(with: urlRequest)
            case .whole: session.dataTask(with: urlRequest, completionHandler: finish)
            }
        let continuation = lock.withLock {
            self.task = task
            return self.continuation.take()
        }
        // Cancelled while it was made: the caller has its answer.
        guard let continuation else { return BlockingCalls.cancel(task) }
        requestGuard.follow(task, request: request, cap: cap, delivery: delivery, continuation: continuation)
        if lock.withLock({ cancelled }) { return requestGuard.cancel(task) }
        task.resume()
    }

    /// Answers the caller with `CancellationError` at once and cancels its task, whenever
    /// it comes.
    func cancel() {
        let (continuation, task) = lock.withLock {
            cancelled = true
            return (self.continuation.take(), self.task)
        }
        if let continuation {
            continuation.resume(throwing: CancellationError())
        } else if let task {
            requestGuard.cancel(task)
        }
    }
}
