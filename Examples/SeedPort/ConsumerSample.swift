// The platform's consumer sample provider, ported as the driver's is in SeedPort.swift: 1. rename
// GMTCAuthorization → TripAuthorization, GMTCAuthorizationContext → TripAuthorizationContext,
// GMTCAuthTokenFetchCompletionHandler → AuthTokenFetchCompletionHandler; 2. make it thread-safe
// (`final`, a lock around the cached token). Its class keeps the sample's name inside
// `ConsumerSample`, since the driver sample's port in this program has the same name.
import FleetAuthConsumer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The platform's consumer sample, ported.
enum ConsumerSample {
    /// The sample provider after the port. What changed from the platform's sample is marked.
    // ported: final, Sendable
    final class SampleAccessTokenProvider: NSObject, TripAuthorization, @unchecked Sendable {
        // Safe because the only mutable state, `authToken`, is read and written only while
        // `lock` is held (see `cached(for:)` and `store(_:)`), and `providerURL` is a constant.
        private struct AuthToken {
            let token: String
            let expiration: TimeInterval
            let tripID: String
        }

        enum AccessTokenError: Error {
            case missingAuthorizationContext
            case missingData
        }

        private let providerURL: URL
        private let lock = NSLock()  // ported: a lock around the cache
        private var authToken: AuthToken?

        // ported: the backend's URL is given, where the sample named a constant of its app.
        init(providerURL: URL) {
            self.providerURL = providerURL
        }

        func fetchToken(
            with authorizationContext: TripAuthorizationContext?,  // ported: renamed
            completion: @escaping AuthTokenFetchCompletionHandler  // ported: renamed
        ) {
            guard let authorizationContext = authorizationContext else {
                completion(nil, AccessTokenError.missingAuthorizationContext)
                return
            }
            let tripID = authorizationContext.tripID
            if let token = cached(for: tripID) {
                completion(token, nil)
                return
            }
            let request = URLRequest(url: providerURL)
            let task = URLSession.shared.dataTask(with: request) { [weak self] data, _, error in
                guard let strongSelf = self else { return }
                guard error == nil else {
                    completion(nil, error)
                    return
                }
                let tripTokenKey = "token"
                let tokenExpirationKey = "expiration"
                guard let data = data,
                    let fetchData = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let token = fetchData[tripTokenKey] as? String,
                    // ported: read through NSNumber (the sample casts `as? Double`), which takes an
                    // integer or a fractional number alike.
                    let expiration = (fetchData[tokenExpirationKey] as? NSNumber)?.doubleValue
                else {
                    completion(nil, AccessTokenError.missingData)
                    return
                }
                strongSelf.store(AuthToken(token: token, expiration: expiration, tripID: tripID))
                completion(token, nil)
            }
            task.resume()
        }

        // ported: the sample's reads and writes of `authToken`, now under the lock.
        private func cached(for tripID: String) -> String? {
            lock.withLock {
                // ported: `Date()` for the sample's `Date.now`, the same moment.
                guard let authToken, authToken.expiration > Date().timeIntervalSince1970, authToken.tripID == tripID
                else { return nil }
                return authToken.token
            }
        }

        private func store(_ token: AuthToken) {
            lock.withLock { authToken = token }
        }
    }
}
