import FleetAuthCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of every session a ``URLSessionTransport`` sends through, its own or the one
/// it derives from an app's session: every request FleetAuth sends passes here.
///
/// It refuses every redirect before it is followed (the 3xx answer is returned as is, so no
/// credential or token reaches another URL). A token request's body streams through it,
/// counted as it is decoded: a `Content-Length` over the cap is refused before any of the body
/// is read, a body that grows past the cap is refused at once, and what comes after a refusal
/// is dropped unread. A refusal answers the caller at once; cancelling the task goes through
/// another queue, so the delegate queue keeps dropping chunks while the cancel waits for
/// FoundationNetworking's work queue on Linux. A fleet call's body comes whole, through its
/// task's completion handler, and is checked against the cap then
/// (``BodyDelivery``). Nothing is cached: the guard declines every response URLSession offers
/// to store. Authentication challenges go to the app's own session delegate when there is one,
/// on that session's delegate queue, so certificate pinning and client certificates keep
/// working.
final class RequestGuard: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safe because `tasks` and `peak` are only read and written while `lock` is held,
    // `challengeAnswerer` is set once in init and never changed (its weak reference is read
    // atomically, as every weak reference is), and the NSObject base has no state of its own
    // that callbacks touch.
    private let lock = NSLock()
    private var tasks: [Int: TaskState] = [:]
    private var peak = 0
    /// Who answers authentication challenges.
    let challengeAnswerer: ChallengeAnswerer

    /// Who answers authentication challenges of the guard's session.
    enum ChallengeAnswerer {
        /// The system's default handling: the transport's own sessions, or an app's session
        /// without a delegate.
        case system
        /// The delegate of the app's session, on that session's delegate queue.
        case appDelegate(AppSessionReference)
    }

    /// The app's session, held strongly when it has no delegate, and weakly when it has one:
    /// a session holds its delegate until it is invalidated, and an app delegate that owns
    /// the transport would otherwise keep itself, its session and the transport alive for good.
    struct AppSessionReference {
        /// The app's session when it has no delegate.
        private let plain: URLSession?
        /// The app's session when it has a delegate, while the app keeps it.
        private weak var delegated: URLSession?

        /// Refers to `session`.
        init(_ session: URLSession) {
            let hasDelegate = session.delegate != nil
            (plain, delegated) = hasDelegate ? (nil, session) : (session, nil)
        }

        /// The app's session, while it lives.
        var session: URLSession? { plain ?? delegated }
        /// Whether the session has a delegate to answer challenges.
        var hasDelegate: Bool { plain == nil }
    }

    /// How a followed task's body reaches the guard.
    enum BodyDelivery {
        /// Chunk by chunk through the delegate, counted as it is decoded: a `Content-Length`
        /// over the cap is refused before the body is read, a body that grows past it at once.
        case streamed
        /// Whole, through the task's completion handler (``finish(_:data:response:error:)``),
        /// with no delegate call per response or chunk; a body over the cap is refused when it
        /// is complete.
        case whole
    }

    /// One data task's progress.
    struct TaskState {
        let request: TransportRequest
        let cap: Int
        let delivery: BodyDelivery
        let continuation: CheckedContinuation<(Data, URLResponse), any Error>
        var data = Data()
        var response: URLResponse?
        /// Whether the caller has its answer already (a refusal, or a cancel): whatever the
        /// task still delivers is dropped unread.
        var answered = false
    }

    /// A guard for the transport's own session (`appSession` nil), or for the session derived
    /// from an app's, whose delegate, if it has one, then answers authentication challenges.
    init(forwardingChallengesOf appSession: AppSessionReference? = nil) {
        if let appSession, appSession.hasDelegate {
            challengeAnswerer = .appDelegate(appSession)
        } else {
            challengeAnswerer = .system
        }
    }

    /// The most bytes any one body held so far, for tests of the cap.
    var peakBufferedBytes: Int { lock.withLock { peak } }

    /// Starts following `task`; `continuation` receives its body and response, or error.
    func follow(
        _ task: URLSessionTask, request: TransportRequest, cap: Int, delivery: BodyDelivery,
        continuation: CheckedContinuation<(Data, URLResponse), any Error>
    ) {
        lock.withLock {
            tasks[task.taskIdentifier] = TaskState(
                request: request, cap: cap, delivery: delivery, continuation: continuation)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Declines to store the answer: tokens and the requests that carry the app's credential
    /// stay in memory, whatever cache the session's configuration names.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let (allowed, refusal) = lock.withLock { () -> (Bool, Refusal?) in
            guard var state = tasks[dataTask.taskIdentifier], !state.answered else { return (false, nil) }
            state.response = response
            tasks[dataTask.taskIdentifier] = state
            let announced = response.expectedContentLength
            guard announced > Int64(state.cap) else { return (true, nil) }
            let error = Self.tooLarge(state, "announces \(announced) bytes (Content-Length)", response)
            return (false, answering(dataTask).map { Refusal(error: error, continuation: $0.0) })
        }
        // FoundationNetworking on Linux ignores the disposition, hence the explicit cancel.
        completionHandler(allowed ? .allow : .cancel)
        if let refusal { refuse(dataTask, refusal) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let refusal = lock.withLock { () -> Refusal? in
            guard var state = tasks[dataTask.taskIdentifier], !state.answered else { return nil }
            state.data.append(data)
            peak = max(peak, state.data.count)
            tasks[dataTask.taskIdentifier] = state
            guard state.data.count > state.cap else { return nil }
            let error = Self.tooLarge(state, "grew past \(state.cap) bytes while streaming", state.response)
            return answering(dataTask).map { Refusal(error: error, continuation: $0.0) }
        }
        if let refusal { refuse(dataTask, refusal) }
    }

    /// Ends a streamed task. A task whose body comes whole ends in its completion handler
    /// (``finish(_:data:response:error:)``), which carries the body.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let state = lock.withLock { () -> TaskState? in
            guard tasks[task.taskIdentifier]?.delivery == .streamed else { return nil }
            return tasks.removeValue(forKey: task.taskIdentifier)
        }
        guard let state, !state.answered else { return }  // answered when it was refused or cancelled
        if let error {
            state.continuation.resume(throwing: URLSessionTransport.translate(error, for: state.request))
        } else if let response = state.response ?? task.response {
            state.continuation.resume(returning: (state.data, response))
        } else {
            state.continuation.resume(throwing: URLError(.badServerResponse))
        }
    }

    /// Ends a task whose body comes whole, with what its completion handler received: a body
    /// over the cap is refused, and dropped.
    func finish(_ task: URLSessionTask, data: Data?, response: URLResponse?, error: (any Error)?) {
        guard let state = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }), !state.answered else {
            return  // answered when it was refused or cancelled
        }
        if let error {
            state.continuation.resume(throwing: URLSessionTransport.translate(error, for: state.request))
        } else if let response {
            let data = data ?? Data()
            guard data.count <= state.cap else {
                return state.continuation.resume(
                    throwing: Self.tooLarge(state, "came whole with \(data.count) bytes", response))
            }
            state.continuation.resume(returning: (data, response))
        } else {
            state.continuation.resume(throwing: URLError(.badServerResponse))
        }
    }

    /// Answers `task`'s caller now, unless it has its answer already: with the body received so
    /// far and `outcome`'s response, or with its error. Whatever the task still delivers is
    /// dropped.
    func answer(_ task: URLSessionTask, with outcome: Result<URLResponse, FleetAuthError>) {
        guard let (continuation, data) = lock.withLock({ answering(task) }) else { return }
        switch outcome {
        case .success(let response): continuation.resume(returning: (data, response))
        case .failure(let error): continuation.resume(throwing: error)
        }
    }

    /// Forgets what `task` received so far: it is sent again, with a credential.
    func restartBody(of task: URLSessionTask) {
        lock.withLock {
            tasks[task.taskIdentifier]?.data = Data()
            tasks[task.taskIdentifier]?.response = nil
        }
    }

    /// The request `task` sends, while it is followed.
    func request(of task: URLSessionTask) -> TransportRequest? {
        lock.withLock { tasks[task.taskIdentifier]?.request }
    }

    /// A refused body's error, and the caller it goes to.
    private struct Refusal {
        let error: FleetAuthError
        let continuation: CheckedContinuation<(Data, URLResponse), any Error>
    }

    /// Marks `task`'s caller answered and returns its continuation with the body received so
    /// far, or `nil` when it was answered already (or the task is not followed). Only with
    /// `lock` held.
    private func answering(_ task: URLSessionTask) -> (CheckedContinuation<(Data, URLResponse), any Error>, Data)? {
        guard var state = tasks[task.taskIdentifier], !state.answered else { return nil }
        let data = state.data
        state.answered = true
        state.data = Data()
        tasks[task.taskIdentifier] = state
        return (state.continuation, data)
    }

    /// Answers the caller with the refusal at once, and cancels `task`. The task stays followed
    /// until it completes, so that whatever still arrives is dropped unread: on Linux a fast
    /// body can keep FoundationNetworking's lane, which the cancel waits for, busy for as long
    /// as it flows, and the caller does not wait for that.
    private func refuse(_ task: URLSessionTask, _ refusal: Refusal) {
        refusal.continuation.resume(throwing: refusal.error)
        BlockingCalls.cancel(task)
    }

    /// Answers `task`'s caller with `CancellationError` at once, unless it has its answer
    /// already, and cancels the task: the caller does not wait for the task to complete, which
    /// on Linux waits for FoundationNetworking's lane.
    func cancel(_ task: URLSessionTask) {
        guard let (continuation, _) = lock.withLock({ answering(task) }) else { return }
        continuation.resume(throwing: CancellationError())
        BlockingCalls.cancel(task)
    }

    private static func tooLarge(_ state: TaskState, _ what: String, _ response: URLResponse?) -> FleetAuthError {
        FleetAuthError(
            reason: .responseTooLarge,
            message:
                "The body \(what), over the transport's \(state.cap)-byte cap; \(state.delivery == .streamed ? "nothing more was read" : "it was dropped").",
            url: state.request.url, status: (response as? HTTPURLResponse)?.statusCode)
    }
}
