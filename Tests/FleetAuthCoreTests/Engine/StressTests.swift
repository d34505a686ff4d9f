import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// A deterministic random source, so a failing interleaving can be replayed from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Many contexts, many concurrent callers, invalidations, sign-outs and expiries, all at
/// once on the manual clock. CI also runs this suite under the thread sanitizer.
@Suite("Stress: concurrent callers, invalidations and expiries", .timeLimit(.minutes(10)))
struct StressTests {
    /// Over random interleavings of thousands of calls across many contexts, a token is
    /// only ever returned for a context its claim covers, and no value is ever returned
    /// for two contexts — even when the backend sometimes mints for the wrong vehicle.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func tokensNeverCrossContexts(seed: UInt64) async throws {
        let clock = ManualWallClock()
        let backend = InMemoryTokenBackend(clock: clock, configuration: .init(lifetime: 900))
        let transport = InMemoryTransport(clock: clock)
        // One answer in eight is minted for another vehicle: the engine must refuse it.
        let answers = LockedState(0)
        transport.route("/token") { request in
            var target = request
            if answers.withLock({ count in
                count += 1; return count % 8 == 3
            }) {
                target.url = URL(string: "https://backend.example.com/token?vehicleId=intruder")!
            }
            return try await backend.respond(to: target)
        }
        // The backend answers at once, but on a loaded machine a fetch's task may run only
        // after the plan has moved the clock on: a timeout no advance can reach keeps this
        // test about crossing contexts, not about timeouts.
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token", timeout: 1e9), transport: transport,
                clock: clock, retry: RetryPolicy(maximumAttempts: 1, deadline: 1e9, failureCooldown: 0),
                cacheCapacity: 16))
        let scopes = (0..<40).map { AuthorizationScope.vehicle("v-\($0)") }
        let owners = LockedState<[String: AuthorizationScope]>([:])
        let failures = LockedState<[String: Int]>([:])
        let violations = LockedState<[String]>([])
        var random = SplitMix64(state: seed)
        let plan: [(kind: Int, scope: AuthorizationScope, advance: Double)] = (0..<3000).map { _ in
            (
                Int.random(in: 0..<100, using: &random), scopes.randomElement(using: &random)!,
                Double.random(in: 0..<30, using: &random)
            )
        }
        await withTaskGroup(of: Void.self) { group in
            for step in plan {
                group.addTask {
                    switch step.kind {
                    case 0..<80:
                        let token: AuthToken
                        do {
                            token = try await engine.token(for: step.scope)
                        } catch {
                            let reason = (error as? FleetAuthError).map { "\($0.reason)" } ?? "\(type(of: error))"
                            failures.withLock { $0[reason, default: 0] += 1 }
                            return
                        }
                        if !token.claims.covers(step.scope) || token.scope != step.scope {
                            violations.withLock { $0.append("\(token) returned for \(step.scope)") }
                        }
                        owners.withLock { owners in
                            if let owner = owners[token.value], owner != step.scope {
                                violations.withLock { $0.append("\(token.fingerprint) for \(owner) and \(step.scope)") }
                            }
                            owners[token.value] = step.scope
                        }
                    case 80..<92:
                        if let cached = engine.cachedToken(for: step.scope) {
                            engine.invalidate(cached.value, for: step.scope)
                        }
                    case 92..<99:
                        clock.advance(by: step.advance)
                    default:
                        engine.invalidateAll()
                    }
                }
            }
        }
        // How many lookups of the storm got a token depends on how the scheduler ordered its
        // tasks: on a loaded machine every fetch task may run only after the plan's last
        // `invalidateAll()`, which fails every caller waiting then. So the storm is followed
        // by one lookup per scope in turn, which must get a token (or refuse an intruder's).
        var handedOut = 0
        for scope in scopes {
            guard let token = try? await engine.token(for: scope) else { continue }
            handedOut += 1
            #expect(token.claims.covers(scope) && token.scope == scope)
            if let owner = owners.withLock({ $0[token.value] }), owner != scope {
                violations.withLock { $0.append("\(token.fingerprint) for \(owner) and \(scope)") }
            }
        }
        #expect(violations.withLock { $0 }.isEmpty, "\(violations.withLock { $0.prefix(5) })")
        // One answer in eight is an intruder's, refused: most scopes still get a token.
        #expect(handedOut >= 30, "failures by reason during the storm: \(failures.withLock { $0 })")
        #expect(engine.statistics.cachedScopes <= 16)
        #expect(engine.statistics.activeFetches == 0)
    }

    /// Thousands of concurrent callers over many contexts with latency, while the clock
    /// runs: every caller gets a token or a typed error, and nothing is left in flight.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func concurrentCallersWithLatencyAndExpiries() async throws {
        let clock = ManualWallClock()
        let backend = InMemoryTokenBackend(clock: clock, configuration: .init(lifetime: 120))
        let transport = InMemoryTransport(clock: clock, latency: 0.2)
        transport.mount(backend, at: "/token")
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock))
        let scopes = (0..<25).map { AuthorizationScope.trip("t-\($0)") }
        let outcome = await clock.runToCompletion(horizon: 2) {
            await withTaskGroup(of: Bool.self) { group in
                for index in 0..<4000 {
                    group.addTask {
                        if index % 500 == 0 { clock.advance(by: 45) }  // tokens go stale and expire meanwhile
                        let scope = scopes[index % scopes.count]
                        guard let token = try? await engine.token(for: scope) else { return false }
                        return token.claims.covers(scope) && token.expiresAt.timeIntervalSince(clock.now()) > 0
                    }
                }
                return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
        }
        #expect(try outcome.get() == 4000)
        #expect(engine.statistics.activeFetches == 0)
        #expect(backend.mintedCount < 4000 / 10)
    }
}
