/// The plumbing the driver and consumer modules share between the completion-handler
/// contract and async/await.
@usableFromInline
package enum ProviderBridge {
    /// Runs `fetch` in a new task (started as `clock` starts the SDK's tasks) and calls
    /// `completion` once with its outcome, never under a lock; the task holds the engine, so
    /// releasing the provider mid-fetch still completes.
    package static func complete(
        _ completion: @escaping AuthTokenFetchCompletionHandler, on clock: any WallClock,
        with fetch: @escaping @Sendable () async throws -> String
    ) {
        _ = clock.startTask {
            do {
                let token = try await fetch()
                completion(token, nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Awaits a completion-handler fetch: a second completion is ignored, one with neither
    /// token nor error becomes `emptyProviderResponse`, and cancelling the waiting task ends
    /// the wait at once, so a provider that never answers cannot hold its caller forever.
    package static func await(
        _ start: (@escaping AuthTokenFetchCompletionHandler) -> Void
    ) async throws -> String {
        // The waiting continuation, until whoever comes first (completion or cancellation)
        // takes it; `cancelled` once the task is cancelled, so a wait that begins after it ends at once.
        let pending = LockedState<(continuation: CheckedContinuation<String, any Error>?, cancelled: Bool)>(
            (nil, false))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let cancelled = pending.withLock { pending in
                    if !pending.cancelled { pending.continuation = continuation }
                    return pending.cancelled
                }
                if cancelled { return continuation.resume(throwing: CancellationError()) }
                start { token, error in
                    guard let continuation = pending.withLock({ $0.continuation.take() }) else { return }
                    resume(continuation, token: token, error: error)
                }
            }
        } onCancel: {
            let continuation = pending.withLock { pending in
                pending.cancelled = true
                return pending.continuation.take()
            }
            continuation?.resume(throwing: CancellationError())
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
    @usableFromInline
    package static func missingContext(_ contextType: String) -> FleetAuthError {
        FleetAuthError(
            reason: .missingContext,
            message:
                "fetchToken was called without a \(contextType) (the SDK passed no authorization context, or one without its vehicle or trip ID); set the ID before updates start, and pass the context the SDK hands you."
        )
    }
}
