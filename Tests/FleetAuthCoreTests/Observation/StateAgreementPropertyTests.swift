import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// Random interleavings of lookups, refreshes, backend failures of each kind, rejections and
/// sign-outs, through the public API on a manual clock. After every step, once the clock has
/// settled: each context's state says what a lookup does (a token handed out exactly when the
/// state holds one it hands out), and every request sent has exactly one outcome event.
@Suite("Token states agree with lookups, whatever happens", .timeLimit(.minutes(10)))
struct StateAgreementPropertyTests {
    /// What the backend does to the next requests.
    enum Backend: CaseIterable {
        case up, unavailable, refusing, unreachable, hanging, foreign
    }

    /// A small deterministic generator (SplitMix64), so that a failing seed replays.
    struct Draws {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    static let steps = 150

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(arguments: 1...16)
    func statesSayWhatLookupsDoAndEveryRequestHasOneOutcome(seed: UInt64) async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock, latency: 0.5)
        let backend = InMemoryTokenBackend(clock: clock)
        transport.mount(backend, at: "/token")
        let mode = LockedState(Backend.up)
        transport.setFaultInjector { request, _ in
            guard request.url.path.hasPrefix("/token") else { return nil }
            switch mode.withLock({ $0 }) {
            case .up: return nil
            case .unavailable: return .status(503)
            case .refusing: return .status(403)
            case .unreachable: return .connectionFailure
            case .hanging: return .hang
            case .foreign: return nil
            }
        }
        backend.configuration.editPayload = { _, payload in
            // A token for another vehicle: the SDK must refuse it.
            if mode.withLock({ $0 }) == .foreign { payload["authorization"] = ["vehicleid": "someone-else"] }
        }
        let counts = LockedState<[TokenEvent.Kind: Int]>([:])
        let provider = try TokenProvider<TruckContext>(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
            observer: { event in counts.withLock { $0[event.kind, default: 0] += 1 } })
        let contexts = ["v-1", "v-2", "v-3"].map(TruckContext.init)
        var draws = Draws(state: seed)
        var log: [String] = []

        for step in 0..<Self.steps {
            let context = contexts[draws.next(contexts.count)]
            switch draws.next(8) {
            case 0:
                mode.withLock { $0 = Backend.allCases[draws.next(Backend.allCases.count)] }
                log.append("backend \(mode.withLock { $0 })")
            case 1, 2:
                let seconds = Double([1, 30, 300, 1_200, 2_900][draws.next(5)])
                await clock.run(until: clock.now().addingTimeInterval(seconds))
                log.append("+\(Int(seconds)) s")
            case 3, 4:
                let lookup = await clock.runToCompletion(horizon: 60) { try await provider.token(for: context) }
                log.append("lookup \(context.vehicleID): \((try? lookup.get()).map { _ in "token" } ?? "error")")
            case 5:
                if let token = provider.cachedUsableToken(for: context) {
                    provider.invalidate(token.value, for: context)  // the fleet service refused it
                    log.append("rejected \(context.vehicleID)")
                }
            case 6:
                _ = clock.startSimulated { await provider.prefetch([context]) }
                log.append("prefetch \(context.vehicleID)")
            default:
                if draws.next(4) == 0 {
                    provider.invalidateAll()
                    log.append("sign-out")
                }
            }
            await clock.settle()
            let trail = "seed \(seed) step \(step): \(log.suffix(6).joined(separator: "; "))"
            for context in contexts {
                // The state first: the lookup after it may start a refresh.
                let state = provider.tokenState(for: context)
                let handedOut = provider.cachedUsableToken(for: context)
                if let handedOut {
                    #expect(
                        [.fresh, .refreshing, .degraded, .refreshRefused].contains(state.phase)
                            && state.tokenFingerprint == handedOut.fingerprint,
                        "a lookup got \(handedOut.fingerprint) but the state says \(state) — \(trail)")
                } else {
                    #expect(
                        state.tokenFingerprint == nil && ![.fresh, .degraded, .refreshRefused].contains(state.phase),
                        "no lookup gets a token but the state says \(state) — \(trail)")
                }
                if [.failed, .degraded, .refreshRefused].contains(state.phase) {
                    #expect(state.error != nil, "\(state) names no error — \(trail)")
                }
            }
            let events = counts.withLock { $0 }
            let outcomes = [.fetchSucceeded, .fetchRetried, .fetchFailed, .rejected].reduce(0) {
                $0 + events[$1, default: 0]
            }
            let started = events[.fetchStarted, default: 0]
            if provider.statistics.activeFetches == 0 {
                #expect(started == outcomes, "\(started) requests sent, \(outcomes) outcomes — \(trail)")
            } else {
                #expect(started >= outcomes, "\(started) requests sent, \(outcomes) outcomes — \(trail)")
            }
        }
        // The run went through the kinds of trouble it is meant to.
        let events = counts.withLock { $0 }
        #expect(events[.fetchStarted, default: 0] > 3)
    }
}
