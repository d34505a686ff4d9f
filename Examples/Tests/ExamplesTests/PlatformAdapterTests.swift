import ExampleSupport
import FleetAuthConsumer
import FleetAuthDriver
import Foundation
import PlatformSDK
import Testing

@testable import ConsumerPlatformAdapter
@testable import PlatformAdapter

/// An adapter that breaks the platform's contract: it answers inside the call, twice.
final class HastyAdapter: NSObject, PlatformAuthorization {
    func fetchToken(
        with authorizationContext: PlatformAuthorizationContext?, completion: @escaping PlatformTokenCompletion
    ) {
        completion("not-a-token", nil)
        completion("not-a-token", nil)
    }
}

@Suite("The platform SDK adapter example", .timeLimit(.minutes(10)))
struct PlatformAdapterTests {
    @Test func everyRequestThroughTheAdapterKeepsThePlatformsContract() async throws {
        let provider = try PlatformAdapterExample.embeddedProvider()
        let requests = await PlatformAdapterExample.run(provider: provider, vehicleID: "v-42")
        #expect(requests.count == 5)
        for request in requests {
            #expect(request.keptContract, "\(request)")
            #expect(request.answer.completions == 1 && !request.answer.calledSynchronously)
        }
        // A token for the vehicle, the same one from the cache, and errors that say what is
        // missing instead of an assertion.
        #expect(requests[0].answer.token != nil && requests[0].answer.token == requests[1].answer.token)
        #expect(requests[2].answer.token != nil)
        for request in requests[3...] {
            #expect(request.answer.error?.contains("without a DriverAuthorizationContext") == true, "\(request)")
            #expect(request.answer.error?.contains("set the ID before updates start") == true, "\(request)")
        }
        #expect(provider.statistics.fetches == 2)  // the vehicle, and its task
    }

    @Test func theStandInSDKCatchesAnAdapterThatAnswersInsideTheCallOrTwice() async {
        let sdk = PlatformDriverSDK(authorization: HastyAdapter())
        let answer = await sdk.requestToken(for: PlatformAuthorizationContext(vehicleID: "v-42"))
        #expect(answer.completions == 2 && answer.calledSynchronously)
        let request = PlatformTokenRequest(label: "hasty", expectsToken: true, answer: answer)
        #expect(!request.keptContract)
        #expect(request.description.hasPrefix("BROKE THE CONTRACT"))
    }
}

/// The consumer side: a `ConsumerTokenProvider` handed to the platform consumer SDK through the
/// example's adapter keeps the SDK's contract.
@Suite("The platform consumer SDK adapter example", .timeLimit(.minutes(10)))
struct ConsumerPlatformAdapterTests {
    @Test func everyRequestThroughTheAdapterKeepsTheConsumerSDKsContract() async throws {
        let provider = try ConsumerPlatformAdapterExample.embeddedProvider()
        let requests = await ConsumerPlatformAdapterExample.run(provider: provider, tripID: "t-1")
        #expect(requests.count == 3)
        for request in requests { #expect(request.keptContract, "\(request)") }
        #expect(requests[0].answer.token != nil && requests[0].answer.token == requests[1].answer.token)
        #expect(requests[2].answer.error?.contains("without a ConsumerAuthorizationContext") == true, "\(requests[2])")
        #expect(provider.statistics.fetches == 1)
        let token = try #require(provider.cachedUsableToken(for: ConsumerAuthorizationContext(tripID: "t-1")))
        #expect(
            token.scope == ConsumerAuthorizationContext(tripID: "t-1").scope
                && token.fingerprint == AuthToken.fingerprint(of: requests[0].answer.token!))
    }
}
