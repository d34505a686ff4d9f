import BenchmarkSubjects
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// A fleet simulator whose vehicles report, as the Testing article writes one: every
/// vehicle's `VehicleReporter` sends an update every 5 s, in a task group inside
/// `runToCompletion`, through `InMemoryTransport` (0.2 s latency) to `InMemoryTokenBackend`
/// and `InMemoryFleetService`, with the default settings; and beside it its floor: the same
/// clock steps and task group, each child only sleeping the transport's latency on the clock.
enum ReportingBench {
    /// What each vehicle's child task does at every step.
    enum Work {
        /// Reports through FleetAuth: the simulator itself.
        case fleetAuth
        /// Sleeps the transport's latency on the clock and nothing else: the floor no
        /// simulator on this clock can go below.
        case clockOnly
    }

    struct Run: CustomStringConvertible {
        var work = Work.fleetAuth
        var vehicles = 0
        var simulatedMinutes = 0.0
        /// Real seconds per simulated hour, from the steps after the first minute (the cold start).
        var secondsPerSimulatedHour = 0.0
        /// Real seconds of the first simulated minute: every vehicle's first token.
        var coldStartSeconds = 0.0
        /// The most resident memory grown over the run, and its growth over the last half.
        var peakResidentGrowthBytes = 0
        var lateResidentGrowthBytes = 0
        var failed = 0
        var tokensPerVehicle = 0.0

        var description: String {
            String(
                format: "%@%d vehicles, %.0f simulated min: %.1f s per simulated hour (cold start %.1f s), "
                    + "peak +%.0f MB (+%.0f MB over the second half), %d failed, %.2f tokens per vehicle",
                work == .clockOnly ? "floor (clock only), " : "", vehicles, simulatedMinutes, secondsPerSimulatedHour,
                coldStartSeconds,
                Double(peakResidentGrowthBytes) / 1e6, Double(lateResidentGrowthBytes) / 1e6, failed,
                tokensPerVehicle)
        }
    }

    /// The simulator and its floor, one after the other in this process.
    static func runWithFloor(vehicles count: Int, simulatedMinutes: Double) async throws -> (Run, floor: Run) {
        let floor = try await run(vehicles: count, simulatedMinutes: simulatedMinutes, work: .clockOnly)
        let fleetAuth = try await run(vehicles: count, simulatedMinutes: simulatedMinutes)
        return (fleetAuth, floor)
    }

    /// `prefetchWave`: fetch the tokens in waves of this many before the first report, as
    /// the article shows for keeping the first minute's peak down.
    static func run(
        vehicles count: Int, simulatedMinutes: Double, work: Work = .fleetAuth, prefetchWave: Int? = nil
    ) async throws -> Run {
        let world = try InMemoryFleet(latency: 0.2)
        let (clock, provider) = (world.clock, world.provider)
        let reporters = try (0..<(work == .clockOnly ? 0 : count)).map { try world.reporter("v-\($0)") }
        let steps = max(24, Int(simulatedMinutes * 12))
        let before = Measure.residentBytes()
        var peak = before
        var atHalf = before
        let began = ContinuousClock.now
        if let prefetchWave {
            for first in stride(from: 0, to: count, by: prefetchWave) {
                let wave = (first..<min(first + prefetchWave, count)).map { reporters[$0].context }
                _ = await clock.runToCompletion { await provider.prefetch(wave) }
                peak = max(peak, Measure.residentBytes())
            }
        }
        let start = clock.now()
        var warm = began
        for step in 0..<steps {
            if step == 12 { warm = ContinuousClock.now }
            if step == steps / 2 { atHalf = Measure.residentBytes() }
            await clock.run(until: start.addingTimeInterval(Double(step) * 5))
            let now = clock.now()
            _ = await clock.runToCompletion {
                await withTaskGroup(of: Void.self) { group in
                    for index in 0..<count {
                        // Each child as the article's loop writes it: a closure that keeps more
                        // across its call takes a larger frame, which can cost a vehicle a slab.
                        if work == .clockOnly {
                            group.addTask { try? await clock.sleep(for: 0.2) }
                            continue
                        }
                        let reporter = reporters[index]
                        let latitude = 52.5 + Double(index % 100) / 1000
                        group.addTask {
                            _ = try? await reporter.report(
                                VehicleLocation(
                                    latitude: latitude, longitude: 13.4, heading: 90, speed: 11.5, accuracy: 4,
                                    timestamp: now))
                        }
                    }
                }
            }
            peak = max(peak, Measure.residentBytes())
        }
        let end = ContinuousClock.now
        var result = Run()
        result.work = work
        result.vehicles = count
        result.simulatedMinutes = Double(steps) / 12
        result.coldStartSeconds = Measure.seconds(warm - began)
        result.secondsPerSimulatedHour = Measure.seconds(end - warm) * 720 / Double(steps - 12)
        result.peakResidentGrowthBytes = peak - before
        result.lateResidentGrowthBytes = max(0, peak - atHalf)
        result.failed = work == .clockOnly ? 0 : steps * count - world.fleetService.acceptedCount
        result.tokensPerVehicle = Double(world.backend.mintedCount) / Double(count)
        return result
    }
}

extension ReportingBench {
    /// What one update's parts cost alone, in nanoseconds, each timed in a loop in the same
    /// process as the simulation: the token lookup, the fleet service's check, the in-memory
    /// transport's bookkeeping without its sleep (the sleep is the floor's), and a whole
    /// report through that transport answered at once.
    struct Parts {
        var lookup = 0.0
        var fleetServiceCheck = 0.0
        var transportBookkeeping = 0.0
        /// `report(_:)` answered at once: the body, the lookup, the reporter's and the
        /// caller's own work and the transport's bookkeeping, without the service or a sleep.
        var reportWithoutServiceOrSleep = 0.0
    }

    static func parts() async throws -> Parts {
        let world = try InMemoryFleet(latency: 0)
        let (clock, provider, fleetService) = (world.clock, world.provider, world.fleetService)
        let context = DriverAuthorizationContext(vehicleID: "v-0")
        let token = try await clock.runToCompletion { try await provider.token(for: context) }.get()
        let update = TransportRequest(
            method: "PUT",
            url: URL(
                string: "https://fleet.example.com/v1/providers/bench-project/vehicles/v-0?updateMask=lastLocation")!,
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(token.value)"],
            body: Data(
                #"{"lastLocation":{"heading":90,"horizontalAccuracy":4,"location":{"latitude":52.5,"longitude":13.4},"speed":11.5,"updateTime":"2027-01-15T08:00:00.000Z"}}"#
                    .utf8))
        // A transport with no latency whose route answers at once: what the double itself costs.
        let bare = InMemoryTransport(clock: clock)
        let ok = TransportResponse(status: 200, headers: [:], body: Data("{}".utf8))
        bare.route(update.url.path) { _ in ok }
        let reporter = try world.reporter("v-0", transport: bare)
        let location = VehicleLocation(
            latitude: 52.5, longitude: 13.4, heading: 90, speed: 11.5, accuracy: 4, timestamp: clock.now())
        var failures = 0
        let nanoseconds = try await Measure.interleavedMedianNanoseconds(
            iterations: 2000,
            [
                { if provider.cachedUsableToken(for: context) == nil { failures += 1 } },
                { if await fleetService.respond(to: update).status != 200 { failures += 1 } },
                { if try await bare.send(update).status != 200 { failures += 1 } },
                { if try await reporter.report(location).status != 200 { failures += 1 } },
            ])
        guard failures == 0 else { throw BenchError("a part of the update failed \(failures) times") }
        return Parts(
            lookup: nanoseconds[0], fleetServiceCheck: nanoseconds[1], transportBookkeeping: nanoseconds[2],
            reportWithoutServiceOrSleep: nanoseconds[3])
    }
}
