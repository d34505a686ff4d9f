// SeedPort: the platform's two sample token providers, the driver's (here) and the consumer's
// (ConsumerSample.swift), ported to FleetAuth's names with the least change Swift 6 requires.
// They are here to prove the porting rule compiles — not to be copied: `DriverTokenProvider`
// and `ConsumerTokenProvider` do this job with validation, single flight, refresh ahead of
// expiry, retries and typed errors. `Examples/SeedSamples` holds both samples renamed and
// nothing else, built in Swift 5 mode.
//
//   swift run --package-path Examples SeedPort --token-url http://127.0.0.1:PORT/token/swift-sample --vehicle-id v-42
//
// The port: 1. rename GMTDAuthorization → DriverAuthorization, GMTDAuthorizationContext →
// DriverAuthorizationContext, GMTDAuthTokenFetchCompletionHandler →
// AuthTokenFetchCompletionHandler; 2. make it thread-safe as the contract always required
// (Swift 6 checks it because DriverAuthorization is Sendable): `final`, and a lock around the
// cached token.
import FleetAuthConsumer
import FleetAuthDriver
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The sample provider after the port. What changed from the platform's sample is marked.
final class SampleAccessTokenProvider: NSObject, DriverAuthorization, @unchecked Sendable {  // ported: final, Sendable
    // Safe because the only mutable state, `authToken`, is read and written only while
    // `lock` is held (see `cached(for:)` and `store(_:)`), and `providerURL` is a constant.
    private struct AuthToken {
        let token: String
        let expiration: TimeInterval
        let vehicleID: String
    }

    enum AccessTokenError: Error {
        case missingAuthorizationContext
        case missingData
    }

    private let providerURL: URL
    private let lock = NSLock()  // ported: a lock around the cache
    private var authToken: AuthToken?

    init(providerURL: URL) {
        self.providerURL = providerURL
    }

    func fetchToken(
        with authorizationContext: DriverAuthorizationContext?,  // ported: renamed
        completion: @escaping AuthTokenFetchCompletionHandler  // ported: renamed
    ) {
        guard let authorizationContext = authorizationContext else {
            completion(nil, AccessTokenError.missingAuthorizationContext)
            return
        }
        let vehicleID = authorizationContext.vehicleID
        if let token = cached(for: vehicleID) {
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
            let vehicleTokenKey = "token"
            let tokenExpirationKey = "expiration"
            guard let data = data,
                let fetchData = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let token = fetchData[vehicleTokenKey] as? String,
                let expiration = (fetchData[tokenExpirationKey] as? NSNumber)?.doubleValue
            else {
                completion(nil, AccessTokenError.missingData)
                return
            }
            strongSelf.store(AuthToken(token: token, expiration: expiration, vehicleID: vehicleID))
            completion(token, nil)
        }
        task.resume()
    }

    // ported: the sample's reads and writes of `authToken`, now under the lock.
    private func cached(for vehicleID: String) -> String? {
        lock.withLock {
            guard let authToken, authToken.expiration > Date().timeIntervalSince1970, authToken.vehicleID == vehicleID
            else { return nil }
            return authToken.token
        }
    }

    private func store(_ token: AuthToken) {
        lock.withLock { authToken = token }
    }
}

@main
struct SeedPort {
    static let usage = """
        usage: SeedPort --token-url URL [--vehicle-id ID] [--trip-id ID]
        The platform's driver and consumer sample providers, ported to FleetAuth's names and
        compiled in Swift 6 mode: each fetches a token twice from the URL, for the vehicle
        (default v-42) and for the trip (default t-7), and says whether the second came from
        its cache. It prints fingerprints, never a token.
        Exit status: 0 fetched, 1 the fetch failed, 2 usage error.
        """

    /// A command line this example cannot run: it exits with status 2.
    struct UsageError: Error, Equatable {
        let message: String
    }

    /// What the command line asks for.
    struct Invocation: Equatable {
        var help = false
        var tokenURL: URL?
        var vehicleID = "v-42"
        var tripID = "t-7"

        init(_ arguments: [String]) throws(UsageError) {
            var rest = arguments[...]
            while let option = rest.popFirst() {
                switch option {
                case "--help": help = true
                case "--token-url", "--vehicle-id", "--trip-id":
                    guard let value = rest.popFirst() else { throw UsageError(message: "\(option) needs a value") }
                    if option == "--vehicle-id" {
                        vehicleID = value
                    } else if option == "--trip-id" {
                        tripID = value
                    } else if let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased()) {
                        tokenURL = url
                    } else {
                        throw UsageError(message: "--token-url needs an http or https URL, not \(value)")
                    }
                default:
                    throw UsageError(
                        message: option.hasPrefix("--") ? "unknown option \(option)" : "unexpected argument \(option)")
                }
            }
            if !help && tokenURL == nil { throw UsageError(message: "--token-url URL is required") }
        }
    }

    static func main() async {
        let invocation: Invocation
        do {
            invocation = try Invocation(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("SeedPort: \(error.message)\nRun `SeedPort --help` for usage.\n".utf8))
            exit(2)
        }
        guard let url = invocation.tokenURL, !invocation.help else {
            print(usage)
            exit(0)
        }
        do {
            // The async method comes with the protocol: each port gets it for free.
            let driver = SampleAccessTokenProvider(providerURL: url)
            let vehicle = DriverAuthorizationContext(vehicleID: invocation.vehicleID)
            try await report("driver", vehicle, driver.fetchToken(with: vehicle), driver.fetchToken(with: vehicle))
            let consumer = ConsumerSample.SampleAccessTokenProvider(providerURL: url)
            let trip = TripAuthorizationContext(tripID: invocation.tripID)
            try await report("consumer", trip, consumer.fetchToken(with: trip), consumer.fetchToken(with: trip))
        } catch {
            FileHandle.standardError.write(Data("SeedPort: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Prints what a port fetched for `context`: a fingerprint, and whether the second call
    /// was served from its cache.
    static func report(_ sample: String, _ context: some CustomStringConvertible, _ token: String, _ again: String) {
        print(
            "\(sample) sample, \(context): fetched \(AuthToken.fingerprint(of: token)); second call served from the cache: \(token == again)"
        )
    }
}
