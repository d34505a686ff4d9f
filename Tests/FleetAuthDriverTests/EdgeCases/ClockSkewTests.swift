import FleetAuthDriver
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Clock skew: the SDK keeps the token, warns, and names the clock when it is refused", .timeLimit(.minutes(10)))
struct ClockSkewTests {
    /// A device on `clock`, a token backend whose clock runs `skew` seconds ahead (its
    /// `Date` header and `iat` agree with each other), and a fleet service on true time.
    struct SkewedWorld {
        let clock = ManualWallClock()
        let backendClock: ManualWallClock
        let transport: InMemoryTransport
        let fleet: InMemoryFleetService
        let events = LockedState<[TokenEvent]>([])
        let provider: DriverTokenProvider

        init(skew: TimeInterval) throws {
            backendClock = ManualWallClock(now: clock.now().addingTimeInterval(skew))
            transport = InMemoryTransport(clock: clock)
            fleet = InMemoryFleetService(clock: clock)
            transport.mount(InMemoryTokenBackend(clock: backendClock), at: "/token")
            transport.mount(fleet)
            let events = self.events
            provider = try DriverTokenProvider(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock,
                observer: { event in events.withLock { $0.append(event) } })
        }

        func reporter() throws(FleetServiceError) -> VehicleReporter {
            try VehicleReporter(
                fleetService: FleetServiceEndpoint(
                    baseURL: URL(string: "https://fleet.example.com")!, providerID: "demo-project"),
                vehicleID: "v-42", authorization: provider, transport: transport, clock: clock)
        }
    }

    @Test func aBackendThreeHoursAheadGetsItsTokenKeptWithAWarning() async throws {
        let world = try SkewedWorld(skew: 3 * 3600)
        let token = try await world.provider.token(for: DriverAuthorizationContext(vehicleID: "v-42"))
        // Kept, with its life read off the backend's clock.
        #expect(token.remainingLife(wallNow: world.clock.now()) > 3500)
        let warnings = world.events.withLock { $0 }.filter {
            if case .clockDisagreement = $0.detail { return true }
            return false
        }
        #expect(warnings.count == 1)
        #expect(warnings.first?.level == .warning)
        #expect(
            warnings.first?.description
                == "clockDisagreement vehicle v-42 \(token.fingerprint): the backend's clock is 3 h ahead of this device's"
        )
    }

    @Test func aBackendWithinAMinuteRaisesNoWarning() async throws {
        let world = try SkewedWorld(skew: 20)
        _ = try await world.provider.token(for: DriverAuthorizationContext(vehicleID: "v-42"))
        #expect(
            !world.events.withLock { $0 }.contains {
                if case .clockDisagreement = $0.detail { return true }
                return false
            })
    }

    @Test func aRefusalOfSuchATokenNamesTheBackendsClock() async throws {
        let world = try SkewedWorld(skew: 3 * 3600)
        do {
            _ = try await world.reporter().report(
                VehicleLocation(latitude: 52.5, longitude: 13.4, timestamp: world.clock.now()))
            Issue.record("a token issued 3 h in the future was accepted")
        } catch {
            #expect(error.fault == .token && error.status == 401)
            #expect(error.message.contains("token issued in the future"), "\(error.message)")
            #expect(error.message.contains("the backend's clock may be off by 3 h"), "\(error.message)")
        }
    }
}
