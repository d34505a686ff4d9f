// QuickStart: a driver provider and a consumer provider on the embedded in-memory token
// backend, run through two simulated hours on a manual clock. No server is needed.
//
// Copy the two `TokenEndpoint` lines and swap `InMemoryTransport` for
// `URLSessionTransport()` to talk to your own backend.
import FleetAuthConsumer
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

let clock = ManualWallClock()
let backend = InMemoryTokenBackend(
    clock: clock, configuration: .init(lifetime: 3600, format: .tokenWithExpiresInSeconds))
let transport = InMemoryTransport(clock: clock)
transport.mount(backend, at: "/fleet/token")

/// Counts events and prints the interesting ones. Events never carry token values.
final class EventLog: Sendable {
    private let counts = LockedCounts()
    func record(_ event: TokenEvent) {
        switch event {
        case .servedFresh: counts.add("served fresh")
        case .servedStale: counts.add("served stale")
        default:
            counts.add(String(describing: event).prefix { $0 != " " }.description)
            print("  event: \(event)")
        }
    }
    var summary: String { counts.summary }
}

/// A tiny thread-safe counter for the demo.
final class LockedCounts: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var counts: [String: Int] = [:]  // guarded by `lock`
    func add(_ key: String) { lock.withLock { counts[key, default: 0] += 1 } }
    var summary: String {
        lock.withLock { counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") }
    }
}

let events = EventLog()
let endpoint = TokenEndpoint(url: "https://backend.example.com/fleet/token", format: .tokenWithExpiresInSeconds)
let driver = try DriverTokenProvider(endpoint: endpoint, transport: transport, clock: clock, observer: events.record)
let consumer = try ConsumerTokenProvider(
    endpoint: endpoint, transport: transport, clock: clock, observer: events.record)

let vehicle = DriverAuthorizationContext(vehicleID: "vehicle-42")
let trip = ConsumerAuthorizationContext(tripID: "trip-7")

print("FleetAuth quick start: one vehicle and one trip, an update every 5 s for 2 simulated hours")
for _ in 0..<(2 * 720) {
    let vehicleToken = try await driver.token(for: vehicle)
    let tripToken = try await consumer.token(for: trip)
    precondition(vehicleToken.claims.covers(vehicle.scope) && tripToken.claims.covers(trip.scope))
    clock.advance(by: 5)
    await Task.yield()
}
// Let the last background refresh finish before reporting.
for _ in 0..<1000 { await Task.yield() }

let token = try await driver.token(for: vehicle)
print("")
print("Latest vehicle token: \(token)")
print("Backend requests: \(transport.requestCount) for 2 × 2 h of one-hour tokens (each refreshed 10 minutes early)")
print("Events: \(events.summary)")
