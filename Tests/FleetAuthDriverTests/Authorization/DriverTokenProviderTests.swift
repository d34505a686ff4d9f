import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

/// A driver provider on an in-memory backend and a manual clock.
struct DriverFixture {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let backend: InMemoryTokenBackend
    let provider: DriverTokenProvider

    init(latency: TimeInterval = 0) throws {
        transport = InMemoryTransport(clock: clock, latency: latency)
        backend = InMemoryTokenBackend(clock: clock)
        transport.mount(backend, at: "/driver-token")
        provider = try DriverTokenProvider(
            endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport, clock: clock
        )
    }
}

/// Records completion calls and the thread state at the time.
final class CompletionLog: Sendable {
    struct Call: Sendable {
        let token: String?
        let error: (any Error)?
    }
    private let state = LockedState<(calls: [Call], returned: Bool, waiters: [CheckedContinuation<Void, Never>])>(
        ([], false, []))

    var handler: AuthTokenFetchCompletionHandler {
        { token, error in
            let waiters = self.state.withLock { state in
                state.calls.append(Call(token: token, error: error))
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Marks that `fetchToken(with:completion:)` has returned to its caller.
    func markReturned() { state.withLock { $0.returned = true } }

    var calls: [Call] { state.withLock { $0.calls } }

    /// Waits for the first completion call.
    func firstCall() async -> Call {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if !state.calls.isEmpty { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
        return calls[0]
    }
}

@Suite("Driver token provider", .timeLimit(.minutes(10)))
struct DriverTokenProviderTests {
    let context = DriverAuthorizationContext(vehicleID: "v-42")

    @Test func completionDeliversAValidTokenForTheVehicle() async throws {
        let fixture = try DriverFixture()
        let log = CompletionLog()
        fixture.provider.fetchToken(with: context, completion: log.handler)
        let call = await log.firstCall()
        let token = try #require(call.token)
        #expect(call.error == nil)
        #expect(try JWTDecoder.decode(token).covers(context.scope))
    }

    @Test(arguments: [true, false])
    func completionIsNeverCalledInsideTheCall(cached: Bool) async throws {
        let fixture = try DriverFixture()
        if cached { _ = try await fixture.provider.fetchToken(with: context) }
        let insideCall = LockedState<Bool?>(nil)
        let log = CompletionLog()
        let logged = log.handler
        ThreadMarker.whileMarked {
            fixture.provider.fetchToken(with: context) { token, error in
                insideCall.withLock { $0 = ThreadMarker.isMarked }
                logged(token, error)
            }
        }
        let call = await log.firstCall()
        #expect(call.token != nil)
        #expect(insideCall.withLock { $0 } == false)
    }

    /// The platform SDK's block, as Swift imports it from Objective-C: not `@Sendable`. It is
    /// passed on as it is (this test does not compile without that overload), and called once.
    @Test(arguments: [true, false])
    func anObjectiveCBlockIsAcceptedAsItIs(cached: Bool) async throws {
        let fixture = try DriverFixture()
        if cached { _ = try await fixture.provider.fetchToken(with: context) }
        let log = CompletionLog()
        let sdkBlock: (String?, (any Error)?) -> Void = log.handler
        fixture.provider.fetchToken(with: context, completion: sdkBlock)
        let call = await log.firstCall()
        #expect(call.token == (try await fixture.provider.fetchToken(with: context)))
        #expect(log.calls.count == 1)
        // Through the protocol too, as an adapter holding `any DriverAuthorization` calls it.
        let authorization: any DriverAuthorization = fixture.provider
        let second = CompletionLog()
        let block: (String?, (any Error)?) -> Void = second.handler
        authorization.fetchToken(with: nil, completion: block)
        #expect((await second.firstCall().error as? FleetAuthError)?.reason == .missingContext)
    }

    /// A lookup from a task cancelled before it asked sends nothing and returns no token.
    @Test(arguments: [true, false])
    func aLookupFromAnAlreadyCancelledTaskSendsNothing(valueOnly: Bool) async throws {
        let fixture = try DriverFixture()
        let provider = fixture.provider
        let context = self.context
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            if valueOnly { return try await provider.fetchToken(with: context) }
            return try await provider.token(for: context).value
        }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(fixture.transport.requestCount == 0)
        #expect(provider.statistics.fetches == 0)
    }

    @Test func completionIsCalledExactlyOnce() async throws {
        let fixture = try DriverFixture()
        let log = CompletionLog()
        fixture.provider.fetchToken(with: context, completion: log.handler)
        _ = await log.firstCall()
        // A second fetch afterwards proves the first task finished; no extra calls came.
        _ = try await fixture.provider.fetchToken(with: context)
        #expect(log.calls.count == 1)
    }

    @Test func nilContextIsATypedErrorNotACrash() async throws {
        let fixture = try DriverFixture()
        let log = CompletionLog()
        fixture.provider.fetchToken(with: nil, completion: log.handler)
        let call = await log.firstCall()
        #expect(call.token.map(AuthToken.fingerprint) == nil)
        #expect((call.error as? FleetAuthError)?.reason == .missingContext)
        #expect(fixture.transport.requestCount == 0)
    }

    @Test func releasedProviderStillCompletes() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: 0.5)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/driver-token")
        let log = CompletionLog()
        weak var weakProvider: DriverTokenProvider?
        do {
            let provider = try DriverTokenProvider(
                endpoint: TokenEndpoint(url: "https://backend.example.com/driver-token"), transport: transport,
                clock: clock)
            weakProvider = provider
            provider.fetchToken(with: context, completion: log.handler)
        }
        #expect(weakProvider == nil)
        await clock.waitForSleepers(count: 1, within: 1)
        clock.advance(by: 0.5)
        let call = await log.firstCall()
        #expect(call.token != nil)
    }

    @Test func invalidateDropsOnlyTheRejectedToken() async throws {
        let fixture = try DriverFixture()
        let first = try await fixture.provider.fetchToken(with: context)
        #expect(fixture.provider.invalidate(first, for: context))
        let second = try await fixture.provider.fetchToken(with: context)
        #expect(AuthToken.fingerprint(of: second) != AuthToken.fingerprint(of: first))
        #expect(!fixture.provider.invalidate(first, for: context))
        #expect(
            AuthToken.fingerprint(of: try await fixture.provider.fetchToken(with: context))
                == AuthToken.fingerprint(of: second))
        fixture.provider.invalidateAll()
        #expect(fixture.provider.statistics.cachedScopes == 0)
    }

    @Test func tasksOfOneVehicleHaveSeparateTokens() async throws {
        let fixture = try DriverFixture()
        let a = try await fixture.provider.token(for: DriverAuthorizationContext(vehicleID: "v-1", taskID: "t-1"))
        let b = try await fixture.provider.token(for: DriverAuthorizationContext(vehicleID: "v-1", taskID: "t-2"))
        #expect(a.fingerprint != b.fingerprint)
        #expect(a.claims.authorization["taskid"] == ["t-1"])
    }

    @Test func worksThroughTheProtocolExistential() async throws {
        let fixture = try DriverFixture()
        let authorization: any DriverAuthorization = fixture.provider
        let token = try await authorization.fetchToken(with: context)
        #expect(try JWTDecoder.decode(token).covers(context.scope))
    }
}

@Suite("Porting a seed-style provider", .timeLimit(.minutes(10)))
struct SeedPortTests {
    /// A provider written the seed's way: only the completion method, renamed types.
    final class SampleStyleProvider: DriverAuthorization {
        let answers: [(String?, (any Error)?)]
        init(answers: [(String?, (any Error)?)]) { self.answers = answers }

        func fetchToken(
            with authorizationContext: DriverAuthorizationContext?,
            completion: @escaping AuthTokenFetchCompletionHandler
        ) {
            for answer in answers { completion(answer.0, answer.1) }
        }
    }

    @Test func asyncMethodComesWithTheCompletionMethod() async throws {
        let token = try await SampleStyleProvider(answers: [("a.b.c", nil)]).fetchToken(
            with: DriverAuthorizationContext(vehicleID: "v-1"))
        #expect(token == "a.b.c")
    }

    @Test func secondCompletionCallIsIgnored() async throws {
        let token = try await SampleStyleProvider(answers: [("first", nil), ("second", nil)]).fetchToken(
            with: DriverAuthorizationContext(vehicleID: "v-1"))
        #expect(token == "first")
    }

    @Test func emptyCompletionIsATypedError() async {
        do {
            _ = try await SampleStyleProvider(answers: [(nil, nil)]).fetchToken(
                with: DriverAuthorizationContext(vehicleID: "v-1"))
            Issue.record("expected emptyProviderResponse")
        } catch {
            #expect((error as? FleetAuthError)?.reason == .emptyProviderResponse)
        }
    }

    @Test func providerErrorsPassThrough() async {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await SampleStyleProvider(answers: [(nil, Refused())]).fetchToken(
                with: DriverAuthorizationContext(vehicleID: "v-1"))
        }
    }
}

/// Marks the current thread while a synchronous call runs: a completion that runs inside
/// the call sees the mark, one that runs later or elsewhere does not.
enum ThreadMarker {
    private static let key = "fleetauth.test.inside-fetchToken"

    static func whileMarked(_ body: () -> Void) {
        Thread.current.threadDictionary[key] = true
        body()
        Thread.current.threadDictionary.removeObject(forKey: key)
    }

    static var isMarked: Bool { Thread.current.threadDictionary[key] != nil }
}
