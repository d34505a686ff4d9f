import BenchmarkSubjects
import FleetAuthCore
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// A fleet simulator as its author writes one: many vehicles on one provider with the
/// default settings, each looking its token up every 5 s on a manual clock.
enum SimulatorBench {
    struct Run {
        var vehicles = 0
        /// Token requests per vehicle in the first simulated hour.
        var firstHourPerVehicle = 0.0
        /// Token requests per vehicle over the second hour, times 24.
        var perVehicleDay = 0.0
        /// Resident memory grown per vehicle once every vehicle has its token, token included.
        var residentBytesPerVehicle = 0.0
        /// The same once the allocator has returned its free pages (the finished lookups'
        /// tasks leave many behind).
        var trimmedResidentBytesPerVehicle = 0.0
        /// Heap memory in use grown per vehicle then, token included: what the provider holds.
        var heapBytesPerVehicle = 0.0
        /// Bytes of one token.
        var tokenBytes = 0.0
        /// Real seconds per simulated hour.
        var secondsPerSimulatedHour = 0.0
    }

    /// `vehicles` vehicles for two simulated hours: the first hour's requests, the second's
    /// (the steady rate), the memory they hold and the time it took. Vehicle i first looks
    /// up at second 60·i/N (a simulator starting its fleet within a minute), then every
    /// 5 s. A lookup that misses waits in a task of its own, as a simulator's vehicles do;
    /// the clock moves on once every such task has made its call.
    static func run(vehicles count: Int) async throws -> Run {
        var result = Run()
        result.vehicles = count
        let clock = ManualWallClock()
        let transport = BenchTransport(clock: clock, latency: 0.2)
        let provider = try DriverTokenProvider(endpoint: Benchmarks.endpoint, transport: transport, clock: clock)
        let contexts = (0..<count).map { DriverAuthorizationContext(vehicleID: "vehicle-\($0)") }
        let starts = (0..<count).map { $0 * 60 / count }
        let byPhase = Dictionary(grouping: 0..<count) { starts[$0] % 5 }
        let origin = clock.now()
        let began = ContinuousClock.now
        let before = Measure.trimmedResidentBytes()
        let heapBefore = Measure.heapBytesInUse()
        let started = Locked(0)
        var pending: [Task<Void, Never>] = []
        var firstHour = 0
        for second in 0..<(2 * 3600) {
            while started.withLock({ $0 }) < pending.count { await Task.yield() }
            await clock.run(until: origin.addingTimeInterval(Double(second)))
            if second == 3600 { firstHour = transport.requestCount }
            if second == 65 {
                // Every vehicle has its token: what the provider holds for them (the
                // finished lookups' tasks released first).
                for task in pending { await task.value }
                pending = []
                started.withLock { $0 = 0 }
                result.residentBytesPerVehicle = Double(Measure.residentBytes() - before) / Double(count)
                result.trimmedResidentBytesPerVehicle = Double(Measure.trimmedResidentBytes() - before) / Double(count)
                result.heapBytesPerVehicle = Double(Measure.heapBytesInUse() - heapBefore) / Double(count)
                result.tokenBytes = Double(provider.cachedUsableToken(for: contexts[0])?.value.utf8.count ?? 0)
            }
            for vehicle in byPhase[second % 5] ?? [] where starts[vehicle] <= second {
                let context = contexts[vehicle]
                if provider.cachedUsableToken(for: context) != nil { continue }
                pending.append(
                    Task {
                        started.withLock { $0 += 1 }
                        _ = try? await provider.token(for: context)
                    })
            }
            if pending.count > 10_000, started.withLock({ $0 }) == pending.count {
                for task in pending { await task.value }
                pending = []
                started.withLock { $0 = 0 }
            }
        }
        await clock.run(until: origin.addingTimeInterval(2 * 3600))
        for task in pending { await task.value }
        result.secondsPerSimulatedHour = Measure.seconds(ContinuousClock.now - began) / 2
        result.firstHourPerVehicle = Double(firstHour) / Double(count)
        result.perVehicleDay = Double(transport.requestCount - firstHour) * 24 / Double(count)
        return result
    }

    /// Seconds per fetch that stores into a full cache of `capacity` contexts (each store
    /// drops one), on the system clock with no latency: the cost of making room.
    static func storeIntoFullCache(capacity: Int, stores: Int = 20_000) async throws -> Double {
        let transport = BenchTransport(clock: BenchTransport.systemClock, latency: 0)
        let provider = try DriverTokenProvider(
            endpoint: Benchmarks.endpoint, transport: transport, cacheCapacity: capacity)
        for index in 0..<capacity {
            _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "fill-\(index)"))
        }
        let began = ContinuousClock.now
        for index in 0..<stores {
            _ = try await provider.token(for: DriverAuthorizationContext(vehicleID: "new-\(index)"))
        }
        return Measure.seconds(ContinuousClock.now - began) / Double(stores)
    }
}
