/// The plumbing the driver and consumer modules share between the completion-handler
/// contract and async/await.
package enum ProviderBridge {
    /// Runs `fetch` in a new task and calls `completion` once with its outcome, never under a
    /// lock; the task holds the engine, so releasing the provider mid-fetch still completes.
    package static func complete(
        _ completion: @escaping AuthTokenFetchCompletionHandler,
        with fetch: @escaping @Sendable () async throws -> String
    ) {
        Task {
            do {
                let token = try await fetch()
                completion(token, nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Awaits a completion-handler fetch. A second call of the completion is ignored;
    /// a call with neither token nor error becomes `emptyProviderResponse`. Cancelling
    /// the waiting task ends the wait at once with `CancellationError` (a late completion
    /// is then ignored), so a provider that never answers cannot hold its caller forever.
    package static func await(
        _ start: (@escaping AuthTokenFetchCompletionHandler) -> Void
    ) async throws -> String {
        let pending = LockedState<CheckedContinuation<String, any Error>?>(nil)
        let cancelled = LockedState(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let alreadyCancelled = cancelled.withLock { cancelled in
                    if !cancelled { pending.withLock { $0 = continuation } }
                    return cancelled
                }
                if alreadyCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                start { token, error in
                    guard let continuation = take(pending) else { return }
                    resume(continuation, token: token, error: error)
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            take(pending)?.resume(throwing: CancellationError())
        }
    }

    /// The waiting continuation, if still there, leaving none: whoever takes it resumes it.
    private static func take(
        _ pending: LockedState<CheckedContinuation<String, any Error>?>
    ) -> CheckedContinuation<String, any Error>? {
        pending.withLock { pending in
            defer { pending = nil }
            return pending
        }
    }

    private static func resume(
        _ continuation: CheckedContinuation<String, any Error>, token: String?, error: (any Error)?
    ) {
        if let error {
            continuation.resume(throwing: error)
        } else if let token {
            continuation.resume(returning: token)
        } else {
            continuation.resume(
                throwing: FleetAuthError(
                    reason: .emptyProviderResponse,
                    message: "The provider completed with neither a token nor an error; it must pass one of them."))
        }
    }

    /// The error for a `nil` context.
    package static func missingContext(_ contextType: String) -> FleetAuthError {
        FleetAuthError(
            reason: .missingContext,
            message: "fetchToken was called without a \(contextType); pass the context the SDK handed you.")
    }
}
