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

    /// `completionHandler`, made to keep URLSession's promise for the default handling on every
    /// platform. FoundationNetworking leaves a task whose HTTP challenge gets
    /// `.performDefaultHandling` waiting for good, and crashes on `.useCredential` without a
    /// credential; there the guard cancels the challenge instead and answers the caller with
    /// the challenge's 401 (or 407), as Apple's URLSession does when it has no credential to
    /// offer.
    private func answering(
        _ challenge: URLAuthenticationChallenge, of task: URLSessionTask,
        with completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) -> @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void {
        #if canImport(FoundationNetworking)
            return { [self] disposition, credential in
                let noCredential =
                    disposition == .performDefaultHandling || (disposition == .useCredential && credential == nil)
                guard noCredential, let failure = challenge.failureResponse else {
                    return completionHandler(disposition, credential)
                }
                declineChallenge(of: task, answering: failure)
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        #else
            return completionHandler
        #endif
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
