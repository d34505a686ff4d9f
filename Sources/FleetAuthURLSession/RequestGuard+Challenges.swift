import FleetAuthCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Authentication challenges, answered by the app's own session delegate on the app
/// session's delegate queue, as URLSession itself would call it: the guard takes the
/// session's place in front of the delegate, and leaves trust decisions to it.
extension RequestGuard {
    /// The guard implements only the task-level method, so that Apple's URLSession sends it
    /// session-wide challenges (server trust, client certificates) too; it hands each to the
    /// method the app's delegate would have received: the session-level one for
    /// session-wide challenges when the delegate has it, else the task-level one.
    ///
    /// Without an app session, or with one that has no delegate, the system's default
    /// handling applies. A challenge that arrives after the app's session or its delegate is
    /// gone (released, or invalidated) is cancelled: the trust decision was the delegate's,
    /// and nobody is left to make it.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let completionHandler = answering(challenge, of: task, with: completionHandler)
        switch challengeAnswerer {
        case .system: return completionHandler(.performDefaultHandling, nil)
        case .appDelegate(let reference):
            guard let appSession = reference.session, let appDelegate = appSession.delegate else {
                return completionHandler(.cancelAuthenticationChallenge, nil)
            }
            appSession.delegateQueue.addOperation {
                Self.forward(challenge, of: task, to: appDelegate, of: appSession, completionHandler: completionHandler)
            }
        }
    }

    /// `completionHandler`, made so that the caller hears of a challenge's outcome at once,
    /// and no thread that must keep going waits for it:
    /// - a cancelled challenge (the app's delegate refused it, or was gone) answers the caller
    ///   at once with an error that says so, not with a transient "cancelled"; the cancel
    ///   itself, which waits for FoundationNetworking's lane on Linux, runs aside;
    /// - on Linux, a challenge left to the default handling or rejected answers the caller at
    ///   once with the challenge's 401 (or 407), as Apple's URLSession does when it has no
    ///   credential to offer: FoundationNetworking leaves such a task waiting for good, and
    ///   crashes on `.useCredential` without a credential;
    /// - a credential passed on starts the body anew: the task is sent again, and what it
    ///   received before was the refusal's body.
    private func answering(
        _ challenge: URLAuthenticationChallenge, of task: URLSessionTask,
        with completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) -> @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void {
        { [self] disposition, credential in
            switch disposition {
            case .cancelAuthenticationChallenge:
                answer(task, with: .failure(cancelled(challenge, of: task)))
                BlockingCalls.cancelling { completionHandler(.cancelAuthenticationChallenge, nil) }
            case .useCredential where credential != nil:
                restartBody(of: task)
                completionHandler(disposition, credential)
            default:
                #if canImport(FoundationNetworking)
                    if let failure = challenge.failureResponse {
                        answer(task, with: .success(failure))
                        return BlockingCalls.cancelling { completionHandler(.cancelAuthenticationChallenge, nil) }
                    }
                #endif
                completionHandler(disposition, credential)
            }
        }
    }

    /// The error of a request whose challenge was cancelled: by the app's delegate, or by the
    /// guard once the delegate was gone. A retry meets the same decision.
    private func cancelled(_ challenge: URLAuthenticationChallenge, of task: URLSessionTask) -> FleetAuthError {
        // The server-trust and client-certificate constants are Apple's only; each one's value
        // is its name.
        let kind =
            switch challenge.protectionSpace.authenticationMethod {
            case "NSURLAuthenticationMethodServerTrust": "server-trust"
            case "NSURLAuthenticationMethodClientCertificate": "client-certificate"
            case NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest: "HTTP authentication"
            default: "authentication"
            }
        return FleetAuthError(
            reason: .insecureEndpoint,
            message:
                "The \(kind) challenge of the request was cancelled: the app session's delegate refused it (for server trust: the server's certificate failed its check, such as certificate pinning), or was gone when it came. Nothing more was sent, and a retry will not change it; check the delegate's pins or credentials against this server.",
            url: request(of: task)?.url ?? task.originalRequest?.url,
            underlyingError: URLError(.userCancelledAuthentication))
    }

    /// Calls the method of `appDelegate` that URLSession would have called for `challenge`.
    private static func forward(
        _ challenge: URLAuthenticationChallenge, of task: URLSessionTask, to appDelegate: any URLSessionDelegate,
        of appSession: URLSession,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            // FoundationNetworking's delegate methods all have default implementations.
            if let taskDelegate = appDelegate as? any URLSessionTaskDelegate {
                taskDelegate.urlSession(
                    appSession, task: task, didReceive: challenge, completionHandler: completionHandler)
            } else {
                appDelegate.urlSession(appSession, didReceive: challenge, completionHandler: completionHandler)
            }
        #else
            let sessionWide = [
                NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate,
                NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
            ].contains(challenge.protectionSpace.authenticationMethod)
            if sessionWide,
                appDelegate.urlSession?(appSession, didReceive: challenge, completionHandler: completionHandler) != nil
            {
                return
            }
            if let taskDelegate = appDelegate as? any URLSessionTaskDelegate,
                taskDelegate.urlSession?(
                    appSession, task: task, didReceive: challenge, completionHandler: completionHandler) != nil
            {
                return
            }
            completionHandler(.performDefaultHandling, nil)
        #endif
    }
}
