import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation

/// One vehicle looking its token up every 5 s while the token backend refuses the app's
/// credential (401, or the `status` given) with no token cached, on the manual clock, with the
/// default policies.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
struct RefusalSimulation {
    let clock = ManualWallClock()
    let transport: InMemoryTransport
    let provider: TokenProvider<TruckContext>
    let truck = TruckContext(vehicleID: "v-42")
    /// Seconds from the start.
    let origin: TimeInterval
    private let requests = LockedState<[TimeInterval]>([])
    private let refusing = LockedState(true)

    init(status: Int = 401) throws {
        transport = InMemoryTransport(clock: clock, latency: 0.2)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        provider = try TokenProvider<TruckContext>(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock)
        let (clock, requests, refusing) = (clock, requests, refusing)
        let origin = clock.uptime()
        self.origin = origin
        transport.setFaultInjector { _, _ in
            requests.withLock { $0.append(clock.uptime() - origin) }
            return refusing.withLock { $0 } ? .status(status) : nil
        }
    }

    /// When the backend received each request, in seconds from the start.
    var requestTimes: [TimeInterval] { requests.withLock { $0 } }

    /// Seconds from the start.
    var time: TimeInterval { clock.uptime() - origin }

    /// Whether the backend refuses the credential.
    func refuses(_ refuses: Bool) { refusing.withLock { $0 = refuses } }

    /// Looks the token up every 5 s until `end` (seconds from the start), from the first
    /// multiple of 5 not before now; returns when the first lookup got a token, if one did.
    @discardableResult
    func lookUp(until end: TimeInterval) async -> TimeInterval? {
        var time = (self.time / 5).rounded(.up) * 5
        while time < end {
            await clock.advanceSettled(to: origin + time)
            if provider.cachedUsableToken(for: truck) != nil { return time }
            let (provider, truck) = (provider, truck)
            let result = await clock.runToCompletion(horizon: 10) { try await provider.token(for: truck) }
            if case .success = result { return self.time }
            time += 5
        }
        return nil
    }
}
