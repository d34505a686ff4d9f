import BenchmarkSubjects
import FleetAuthCore
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// The measurements, each returning its figures.
enum Benchmarks {
    static let endpoint = BenchTransport.endpoint

    // MARK: Lookup against its peers

    struct Lookup {
        /// Nanoseconds per lookup of each design, timed the same way in this run.
        var nanoseconds: [LookupDesign: Double] = [:]
        var throughput: [Int: Double] = [:]  // FleetAuth, tasks on different keys → calls per second
        var hotKeyThroughput: [Int: Double] = [:]  // FleetAuth, tasks on one key → calls per second
        var floorHotKeyRatio = 0.0  // the floor's 2 tasks on one key over its 1 task
        var snapshotHotKeyRatio = 0.0
        var floor: Double { nanoseconds[.floor]! }
        func ratio(_ design: LookupDesign) -> Double { nanoseconds[design]! / floor }
        var twoTasksRatio: Double { throughput[2]! / throughput[1]! }
        var hotKeyTwoTasksRatio: Double { hotKeyThroughput[2]! / hotKeyThroughput[1]! }
    }

    static func lookup() async throws -> Lookup {
        let subjects = try await LookupDesign.Subjects.make()
        let sink = Sink()
        var result = Lookup()
        // Every design in the same loop (`LookupDesign.run`), batches interleaved so that a
        // noisy moment hits all of them: the median of 21 batches of 50,000 lookups each.
        var samples: [LookupDesign: [Double]] = [:]
        let clock = ContinuousClock()
        for _ in 0..<21 {
            for design in LookupDesign.timed {
                let start = clock.now
                sink.value &+= try await design.run(subjects, iterations: 50_000)
                samples[design, default: []].append(Measure.seconds(clock.now - start) * 1e9 / 50_000)
            }
        }
        for (design, values) in samples { result.nanoseconds[design] = Measure.median(values) }
        // Throughput: every task on its own vehicle (one context each), then all on one.
        let provider = subjects.provider
        let context = subjects.context
        let keyed = (0..<8).map { DriverAuthorizationContext(vehicleID: "vehicle-\($0)") }
        for keyedContext in keyed { _ = try await provider.fetchToken(with: keyedContext) }
        for tasks in [1, 2, 8] {
            result.throughput[tasks] = try await throughput(provider, Array(keyed.prefix(tasks)), sink)
            result.hotKeyThroughput[tasks] = try await throughput(
                provider, Array(repeating: context, count: tasks), sink)
        }
        // The peers' hot key, for comparison.
        result.floorHotKeyRatio =
            try await peerThroughput(tasks: 2, { subjects.floor.token(for: "vehicle-42") })
            / peerThroughput(tasks: 1, { subjects.floor.token(for: "vehicle-42") })
        result.snapshotHotKeyRatio =
            try await peerThroughput(tasks: 2, { subjects.snapshot.token(for: "vehicle-42") })
            / peerThroughput(tasks: 1, { subjects.snapshot.token(for: "vehicle-42") })
        if sink.value == 42 { print("") }
        return result
    }

    /// Calls per second of a peer's lookup over `tasks` tasks on one key, 400,000 in all.
    static func peerThroughput(tasks: Int, _ lookup: @escaping @Sendable () -> String?) async throws -> Double {
        let perTask = 400_000 / tasks
        let start = ContinuousClock.now
        let total = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var local = 0
                    for _ in 0..<perTask { local &+= lookup()?.utf8.count ?? 0 }
                    return local
                }
            }
            return await group.reduce(0, &+)
        }
        if total == 42 { print("") }
        return Double(perTask * tasks) / Measure.seconds(ContinuousClock.now - start)
    }

    /// Calls per second over all tasks, one task per context given, 400,000 calls in all.
    static func throughput(
        _ provider: DriverTokenProvider, _ contexts: [DriverAuthorizationContext], _ sink: Sink
    ) async throws -> Double {
        let perTask = 400_000 / contexts.count
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for context in contexts {
                group.addTask {
                    var local = 0
                    for _ in 0..<perTask { local &+= try await provider.fetchToken(with: context).utf8.count }
                    return local
                }
            }
            for try await local in group { sink.value &+= local }
        }
        return Double(perTask * contexts.count) / Measure.seconds(ContinuousClock.now - start)
    }

    // MARK: Cold cache, many callers

    struct ColdStart {
        var fleetAuthRequests = 0
        var seedRequests = 0
    }

    /// `callers` tasks ask at once for one vehicle's token; the backend answers after
    /// 200 ms of real time, so every caller arrives while the first request is in flight.
    static func coldStart(callers: Int = 1000) async throws -> ColdStart {
        var result = ColdStart()
        let clock = BenchTransport.systemClock
        do {
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let provider = try DriverTokenProvider(endpoint: endpoint, transport: transport)
            let context = DriverAuthorizationContext(vehicleID: "vehicle-42")
            _ = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<callers { group.addTask { try await provider.fetchToken(with: context) } }
                return try await group.reduce(0) { $0 + $1.utf8.count }
            }
            result.fleetAuthRequests = transport.requestCount
        }
        do {
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let seed = SeedSampleProvider(url: BenchTransport.endpointURL, transport: transport, clock: clock)
            _ = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<callers { group.addTask { try await seed.fetchToken(vehicleID: "vehicle-42") } }
                return try await group.reduce(0) { $0 + $1.utf8.count }
            }
            result.seedRequests = seed.requestCount
        }
        return result
    }

    // MARK: A simulated day

    struct SteadyState {
        var vehicles = 0
        var updatesPerVehicle = 0
        var minimumRequests = 0
        var fleetAuthWaiting = 0
        var fleetAuthRequests = 0
        var fleetAuthShortLived = 0
        var seedWaiting = 0
        var seedRequests = 0
        var seedShortLived = 0
    }

    /// One update every 5 s for a day for `vehicles` vehicles, one-hour tokens, 200 ms
    /// backend latency, all on the manual clock. "Waiting" counts callers after each
    /// vehicle's first fetch that had to wait for the network; "short-lived" counts tokens
    /// handed out with less than 5 minutes of life left.
    static func steadyState(vehicles count: Int = 100, hours: Double = 24) async throws -> SteadyState {
        let interval = 5.0
        let steps = Int(hours * 3600 / interval)
        var result = SteadyState()
        result.vehicles = count
        result.updatesPerVehicle = steps
        let tokenLifetime = 3600.0  // BenchTransport's default
        // The least any provider can fetch that never hands out a token with under
        // 5 minutes left: one token per (lifetime − 5 min) per vehicle.
        result.minimumRequests = count * Int((hours * 3600 / (tokenLifetime - 300)).rounded(.up))
        let contexts = (0..<count).map { DriverAuthorizationContext(vehicleID: "vehicle-\($0)") }

        // FleetAuth.
        do {
            let clock = ManualWallClock()
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let provider = try DriverTokenProvider(endpoint: endpoint, transport: transport, clock: clock)
            let driver = LatencyDriver(clock: clock)
            let start = clock.now()
            var shortLived = 0
            for step in 0..<steps {
                clock.advance(to: start.addingTimeInterval(Double(step) * interval))
                for context in contexts {
                    let token = try await provider.token(for: context)
                    if token.expiresAt.timeIntervalSince(clock.now()) < 300 { shortLived += 1 }
                }
                // The backend answers within its latency: a background refresh started in
                // this step gets its answer before the next step's time.
                await provider.waitUntilIdle()
            }
            driver.stop()
            result.fleetAuthRequests = transport.requestCount
            // Every vehicle's first lookup waits for its first token; any other wait counts.
            result.fleetAuthWaiting = provider.statistics.waits - count
            result.fleetAuthShortLived = shortLived
        }

        // The seed sample: one provider per vehicle, as each phone runs its own.
        do {
            let clock = ManualWallClock()
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let seeds = contexts.map { _ in
                SeedSampleProvider(url: BenchTransport.endpointURL, transport: transport, clock: clock)
            }
            let driver = LatencyDriver(clock: clock)
            let start = clock.now()
            var shortLived = 0
            var expiries: [String: Date] = [:]  // decode each token once, not at every update
            for step in 0..<steps {
                clock.advance(to: start.addingTimeInterval(Double(step) * interval))
                for (context, seed) in zip(contexts, seeds) {
                    let token = try await seed.fetchToken(vehicleID: context.vehicleID)
                    if expiries[token] == nil {
                        // The JWT's own `exp`.
                        expiries[token] = Self.expiry(of: token) ?? .distantPast
                    }
                    let exp = expiries[token]!
                    if exp.timeIntervalSince(clock.now()) < 300 { shortLived += 1 }
                }
            }
            driver.stop()
            // In the sample every request is made by a caller that waits for it.
            result.seedRequests = transport.requestCount
            result.seedWaiting = transport.requestCount - count
            result.seedShortLived = shortLived
        }
        return result
    }

    // MARK: Memory and scale

    struct Scale: Codable {
        var contexts = 0
        var overheadBytesPerContext = 0.0
        var tokenBytesPerContext = 0.0
        var lookupNanosecondsAtScale = 0.0
        var lookupNanosecondsAtTen = 0.0
        var ratio: Double { lookupNanosecondsAtScale / lookupNanosecondsAtTen }
    }

    /// Memory per cached context beyond its token, and a lookup at random over `count`
    /// contexts against one over 10.
    static func scale(contexts count: Int = 100_000) async throws -> Scale {
        var result = Scale()
        result.contexts = count
        let transport = BenchTransport(clock: BenchTransport.systemClock, latency: 0)
        let provider = try DriverTokenProvider(endpoint: endpoint, transport: transport, cacheCapacity: count + 10)
        let contexts = (0..<count).map { DriverAuthorizationContext(vehicleID: "vehicle-\($0)") }
        // Warm the allocator with a throwaway provider so its growth is not counted.
        do {
            let warm = try DriverTokenProvider(endpoint: endpoint, transport: transport)
            for context in contexts.prefix(2000) { _ = try await warm.token(for: context) }
        }
        let before = Measure.residentBytes()
        var tokenBytes = 0
        for context in contexts { tokenBytes += try await provider.token(for: context).value.utf8.count }
        let after = Measure.residentBytes()
        result.tokenBytesPerContext = Double(tokenBytes) / Double(count)
        result.overheadBytesPerContext = Double(after - before - tokenBytes) / Double(count)

        let sink = Sink()
        var random = SystemRandomNumberGenerator()
        let order = (0..<200_000).map { _ in contexts[Int.random(in: 0..<count, using: &random)] }
        let few = Array(contexts.prefix(10))
        let fewOrder = (0..<200_000).map { _ in few[Int.random(in: 0..<10, using: &random)] }
        var atScale = 0
        var atTen = 0
        let medians = try await Measure.interleavedMedianNanoseconds(
            batches: 61, iterations: order.count / 31,
            [
                {
                    sink.value &+= try await provider.fetchToken(with: order[atScale]).utf8.count
                    atScale = atScale == order.count - 1 ? 0 : atScale + 1
                },
                {
                    sink.value &+= try await provider.fetchToken(with: fewOrder[atTen]).utf8.count
                    atTen = atTen == fewOrder.count - 1 ? 0 : atTen + 1
                },
            ])
        result.lookupNanosecondsAtScale = medians[0]
        result.lookupNanosecondsAtTen = medians[1]
        return result
    }

    /// The `exp` of a JWT, read the way the seed sample reads it (JWT decoding is FleetAuth's
    /// own business and not public).
    static func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var text = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.utf8.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text),
            let payload = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let exp = payload["exp"] as? Double
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}
