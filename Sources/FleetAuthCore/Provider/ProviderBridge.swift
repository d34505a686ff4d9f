/// The plumbing the driver and consumer modules share between the completion-handler
/// contract and async/await.
package enum ProviderBridge {
    /// Runs `fetch` in a new task and calls `completion` exactly once with its outcome:
    /// always asynchronously, never under a lock. The task holds what `fetch` captures
    /// (the engine, not the provider), so releasing the provider mid-fetch still
    /// completes.
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
    /// a call with neither token nor error becomes `emptyProviderResponse`.
    package static func await(
        _ start: (@escaping AuthTokenFetchCompletionHandler) -> Void
    ) async throws -> String {
        let resumed = LockedState(false)
        return try await withCheckedThrowingContinuation { continuation in
            start { token, error in
                let first = resumed.withLock { done -> Bool in
                    defer { done = true }
                    return !done
                }
                guard first else { return }
                if let error {
                    continuation.resume(throwing: error)
                } else if let token {
                    continuation.resume(returning: token)
                } else {
                    continuation.resume(
                        throwing: FleetAuthError(
                            code: .emptyProviderResponse,
                            message:
                                "The provider completed with neither a token nor an error; it must pass one of them."))
                }
            }
        }
    }

    /// The error for a `nil` context.
    package static func missingContext(_ contextType: String) -> FleetAuthError {
        FleetAuthError(
            code: .missingContext,
            message: "fetchToken was called without a \(contextType); pass the context the SDK handed you.")
    }
}
