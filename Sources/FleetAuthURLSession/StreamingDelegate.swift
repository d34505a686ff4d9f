import FleetAuthCore

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the session a ``URLSessionTransport`` makes for itself: it refuses every
/// redirect, and reads each body as it streams in, refusing one whose `Content-Length`
/// announces more than the cap before any of it is read, and stopping one that grows past
/// the cap, so this delegate never holds more than the cap and one chunk. On Linux,
/// Foundation queues each chunk for the delegate without flow control, so a body streamed
/// past the cap is held in that queue until the cancel reaches libcurl (see the Security
/// article of FleetAuthCore, *Bounded input*).
final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safe because `tasks` and `peak` are only read and written while `lock` is held, and
    // the NSObject base has no state of its own that callbacks touch.
    private let lock = NSLock()
    private var tasks: [Int: TaskState] = [:]
    private var peak = 0

    /// One data task's progress.
    struct TaskState {
        let request: TransportRequest
        let cap: Int
        let continuation: CheckedContinuation<(Data, URLResponse), any Error>
        var data = Data()
        var response: URLResponse?
        var refusal: FleetAuthError?
    }

    /// The most bytes any one body held so far, for tests of the cap.
    var peakBufferedBytes: Int { lock.withLock { peak } }

    /// Starts following `task`; `continuation` receives its body and response, or error.
    func follow(
        _ task: URLSessionTask, request: TransportRequest, cap: Int,
        continuation: CheckedContinuation<(Data, URLResponse), any Error>
    ) {
        lock.withLock {
            tasks[task.taskIdentifier] = TaskState(request: request, cap: cap, continuation: continuation)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let allowed = lock.withLock { () -> Bool in
            guard var state = tasks[dataTask.taskIdentifier] else { return true }
            state.response = response
            let announced = response.expectedContentLength
            if announced > Int64(state.cap) {
                state.refusal = Self.tooLarge(state, "announces \(announced) bytes (Content-Length)", response)
            }
            tasks[dataTask.taskIdentifier] = state
            return state.refusal == nil
        }
        completionHandler(allowed ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflow = lock.withLock { () -> Bool in
            guard var state = tasks[dataTask.taskIdentifier], state.refusal == nil else { return false }
            state.data.append(data)
            peak = max(peak, state.data.count)
            if state.data.count > state.cap {
                state.refusal = Self.tooLarge(state, "grew past \(state.cap) bytes while streaming", state.response)
                state.data = Data()
            }
            tasks[dataTask.taskIdentifier] = state
            return state.refusal != nil
        }
        if overflow { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let refusal = state.refusal {
            state.continuation.resume(throwing: refusal)
        } else if let error {
            state.continuation.resume(throwing: URLSessionTransport.translate(error, for: state.request))
        } else if let response = state.response ?? task.response {
            state.continuation.resume(returning: (state.data, response))
        } else {
            state.continuation.resume(throwing: URLError(.badServerResponse))
        }
    }

    private static func tooLarge(_ state: TaskState, _ what: String, _ response: URLResponse?) -> FleetAuthError {
        FleetAuthError(
            reason: .responseTooLarge,
            message: "The body \(what), over the transport's \(state.cap)-byte cap; nothing more was read.",
            url: state.request.url, status: (response as? HTTPURLResponse)?.statusCode)
    }
}
