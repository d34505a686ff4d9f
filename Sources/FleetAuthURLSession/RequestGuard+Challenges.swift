import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Authentication challenges, answered by the app's own session delegate: the guard takes
/// the session's place in front of it, and leaves trust decisions to it.
extension RequestGuard {
    /// The guard implements only the task-level method, so that Apple's URLSession sends it
    /// session-wide challenges (server trust, client certificates) too; it hands each to the
    /// method the app's delegate would have received: the session-level one for
    /// session-wide challenges when the delegate has it, else the task-level one. Without an
    /// app delegate, the system's default handling applies.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let appDelegate, let appSession else { return completionHandler(.performDefaultHandling, nil) }
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
