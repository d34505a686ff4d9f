import BenchmarkSubjects
import FleetAuthCore
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// A fleet that starts together, as an operator runs it: 1-hour tokens, 0.2 s latency, every
/// vehicle looking its token up every 5 s, the first lookups spread over one minute, all on
/// the manual clock and the public API.
enum HerdBench {
    struct Row {
        let name: String
        /// Hours 2 on: the busiest minute and 5 minutes over the mean ones.
        let busiestMinute: Double
        let busiestFiveMinutes: Double
        /// Token requests per vehicle in the first hour, and per vehicle-day after it.
        let firstHour: Double
        let perVehicleDay: Double
        let failedLookups: Int
    }

    struct Report {
        let rows: [Row]
        let outageVehicles: Int
        /// Token requests per second in the outage's last minute, and the most in one second
        /// in the two minutes after the backend returns.
        let outageRequestsPerSecond: Double
        let peakOnReturn: Int
    }

    /// The simulator on one provider, phones with a provider each, the simulator without
    /// the spread, and a fleet of 100 through a 1-hour outage.
    static func run(quick: Bool) async throws -> Report {
        let simulator = quick ? 1000 : 10_000
        let phones = quick ? 200 : 2000
        let hours = quick ? 3.0 : 6.0
        var rows: [Row] = []
        for (name, vehicles, shared, spreads) in [
            ("\(simulator) vehicles, one provider", simulator, true, true),
            ("\(phones) phones, a provider each", phones, false, true),
            ("\(simulator) vehicles, spread off", simulator, true, false),
        ] {
            let fleet = try await simulate(
                vehicles: vehicles, hours: hours, sharedProvider: shared,
                refresh: RefreshPolicy(spreadsRefreshes: spreads))
            let later = 1..<Int(hours)
            rows.append(
                Row(
                    name: name, busiestMinute: fleet.busiestOverMean(bin: 60, hours: later),
                    busiestFiveMinutes: fleet.busiestOverMean(bin: 300, hours: later),
                    firstHour: fleet.requestsPerVehicle(hours: 0..<1),
                    perVehicleDay: fleet.requestsPerVehicle(hours: later, perDay: true),
                    failedLookups: fleet.failedLookups))
        }
        let outage = 3600..<7200
        let down = try await simulate(vehicles: 100, hours: 2.5, sharedProvider: true, outage: outage)
        // The last minute of the outage, when every vehicle's token has run out.
        let lastMinute = down.requestsPerSecond[(outage.upperBound - 60)..<outage.upperBound].reduce(0, +)
        return Report(
            rows: rows, outageVehicles: 100, outageRequestsPerSecond: Double(lastMinute) / 60,
            peakOnReturn: down.peakPerSecond(from: outage.upperBound))
    }

    struct Fleet {
        let vehicles: Int
        /// Token requests per second of simulated time, from the first lookup.
        let requestsPerSecond: [Int]
        /// Lookups that found no usable token and whose fetch then failed.
        let failedLookups: Int

        /// The busiest `bin`-second window of `hours` over the mean window there.
        func busiestOverMean(bin: Int, hours: Range<Int>) -> Double {
            let seconds = requestsPerSecond[
                min(
                    hours.lowerBound * 3600, requestsPerSecond.count)..<min(
                        hours.upperBound * 3600, requestsPerSecond.count)]
            let bins = stride(from: seconds.startIndex, to: seconds.endIndex, by: bin).map {
                seconds[$0..<min($0 + bin, seconds.endIndex)].reduce(0, +)
            }
            let mean = Double(bins.reduce(0, +)) / Double(max(bins.count, 1))
            return Double(bins.max() ?? 0) / max(mean, 1)
        }

        /// Token requests per vehicle in `hours`, scaled to a day when `perDay`.
        func requestsPerVehicle(hours: Range<Int>, perDay: Bool = false) -> Double {
            let seconds = requestsPerSecond[
                min(
                    hours.lowerBound * 3600, requestsPerSecond.count)..<min(
                        hours.upperBound * 3600, requestsPerSecond.count)]
            let perVehicle = Double(seconds.reduce(0, +)) / Double(vehicles)
            return perDay ? perVehicle * 24 / Double(hours.count) : perVehicle
        }

        /// The most requests in one second from `start` (seconds) on.
        func peakPerSecond(from start: Int, within seconds: Int = 120) -> Int {
            requestsPerSecond[min(start, requestsPerSecond.count)..<min(start + seconds, requestsPerSecond.count)]
                .max() ?? 0
        }
    }

    /// Runs `vehicles` for `hours` on one provider (`sharedProvider`) or one provider each;
    /// the token backend answers 503 during `outage` (seconds from the start).
    static func simulate(
        vehicles: Int, hours: Double, sharedProvider: Bool, refresh: RefreshPolicy = RefreshPolicy(),
        outage: Range<Int> = 0..<0
    ) async throws -> Fleet {
        let clock = ManualWallClock()
        let origin = clock.uptime()
        let transport = InMemoryTransport(clock: clock, latency: 0.2)
        let backend = InMemoryTokenBackend(clock: clock)
        let duration = Int(hours * 3600)
        let requests = Locked([Int](repeating: 0, count: duration + 60))
        transport.route("/token") { request in
            let second = Int(clock.uptime() - origin)
            requests.withLock { if $0.indices.contains(second) { $0[second] += 1 } }
            if outage.contains(second) { return TransportResponse(status: 503) }
            return try await backend.respond(to: request)
        }
        let endpoint = TokenEndpoint(url: "https://backend.example.com/token")
        let providers = try (0..<(sharedProvider ? 1 : vehicles)).map { _ in
            try DriverTokenProvider(
                endpoint: endpoint, transport: transport, clock: clock, refresh: refresh,
                cacheCapacity: max(1024, sharedProvider ? vehicles : 1))
        }
        let contexts = (0..<vehicles).map { DriverAuthorizationContext(vehicleID: "v-\($0)") }
        // Vehicle i first looks up at second 60·i/N, then every 5 s.
        let starts = (0..<vehicles).map { $0 * 60 / vehicles }
        let byPhase = Dictionary(grouping: 0..<vehicles) { starts[$0] % 5 }
        let failed = Locked(0)
        let started = Locked(0)
        var pending: [Task<Void, Never>] = []
        for second in 0..<duration {
            // A lookup that missed waits in a task of its own; the clock moves on only once
            // every such task has made its call (a call registers before it first suspends).
            while started.withLock({ $0 }) < pending.count { await Task.yield() }
            await clock.run(until: clock.now().addingTimeInterval(origin + Double(second) - clock.uptime()))
            for vehicle in byPhase[second % 5] ?? [] where starts[vehicle] <= second {
                let provider = providers[sharedProvider ? 0 : vehicle]
                let context = contexts[vehicle]
                if provider.cachedUsableToken(for: context) != nil { continue }
                pending.append(
                    Task {
                        started.withLock { $0 += 1 }
                        do { _ = try await provider.token(for: context) } catch { failed.withLock { $0 += 1 } }
                    })
            }
        }
        // Every waiting lookup ends within the retry deadline once time moves on.
        await clock.run(until: clock.now().addingTimeInterval(60))
        for task in pending { await task.value }
        for provider in providers { provider.invalidateAll() }
        return Fleet(
            vehicles: vehicles, requestsPerSecond: Array(requests.withLock { $0 }.prefix(duration)),
            failedLookups: failed.withLock { $0 })
    }
}
