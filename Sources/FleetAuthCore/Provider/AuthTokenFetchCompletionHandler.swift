/// The completion of a provider's `fetchToken(with:completion:)`: a token or an error,
/// exactly one of them non-`nil`. It may be called on any thread.
public typealias AuthTokenFetchCompletionHandler = @Sendable (_ token: String?, _ error: (any Error)?) -> Void
