import FleetAuthCore
import FleetAuthDriver
import FleetAuthInMemory
import Foundation

/// The measurements, each returning its figures.
enum Benchmarks {
    static let endpoint = TokenEndpoint(url: "https://backend.example.com/token", format: .swiftSample())

    // MARK: Lookup against the practical floor

    struct Lookup {
        var apiNanoseconds = 0.0
        var bareLockNanoseconds = 0.0
        var throughput: [Int: Double] = [:]  // tasks → calls per second
        var ratio: Double { apiNanoseconds / bareLockNanoseconds }
    }

    static func lookup() async throws -> Lookup {
        let clock = SystemWallClock()
        let provider = try DriverTokenProvider(
            endpoint: endpoint, transport: BenchTransport(clock: clock, latency: 0), clock: clock)
        let context = DriverAuthorizationContext(vehicleID: "vehicle-42")
        let token = try await provider.fetchToken(with: context)
        let sink = Sink()
        var result = Lookup()
        // The floor: a lock and a dictionary lookup of a string, nothing else.
        let lock = NSLock()
        let table = ["vehicle-42": token]
        let key = "vehicle-42"
        result.bareLockNanoseconds = await Measure.medianNanoseconds(iterations: 200_000) {
            let found = lock.withLock { table[key] }
            sink.value &+= found?.utf8.count ?? 0
        }
        if CommandLine.arguments.contains("--breakdown") {
            let scope = context.scope
            let engine = try TokenEngine(configuration: provider.configuration)
            _ = try await engine.token(for: scope)
            let direct = try await Measure.medianNanoseconds(iterations: 200_000) {
                sink.value &+= try await engine.token(for: scope).lifetime > 0 ? 1 : 0
            }
            let clockOnly = await Measure.medianNanoseconds(iterations: 200_000) {
                sink.value &+= clock.now().timeIntervalSince1970 > 0 ? 1 : 0
            }
            var hasher = 0
            let hashOnly = await Measure.medianNanoseconds(iterations: 200_000) {
                hasher &+= scope.hashValue
            }
            sink.value &+= hasher
            let viaContext = try await Measure.medianNanoseconds(iterations: 200_000) {
                sink.value &+= try await engine.token(for: context.scope).lifetime > 0 ? 1 : 0
            }
            let providerToken = try await Measure.medianNanoseconds(iterations: 200_000) {
                sink.value &+= try await provider.token(for: context).lifetime > 0 ? 1 : 0
            }
            let valueOnly = try await Measure.medianNanoseconds(iterations: 200_000) {
                sink.value &+= try await engine.token(for: scope).value.utf8.count
            }
            print(
                "breakdown: engine.token \(direct) ns, clock.now \(clockOnly) ns, scope hash \(hashOnly) ns, engine via context.scope \(viaContext) ns, provider.token \(providerToken) ns, engine + .value.utf8.count \(valueOnly) ns"
            )
        }
        // The public async API, answered from the cache.
        result.apiNanoseconds = try await Measure.medianNanoseconds(iterations: 200_000) {
            sink.value &+= try await provider.fetchToken(with: context).utf8.count
        }
        for tasks in [1, 2, 8] {
            let perTask = 400_000 / tasks
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<tasks {
                    group.addTask {
                        var local = 0
                        for _ in 0..<perTask { local &+= try await provider.fetchToken(with: context).utf8.count }
                        return local
                    }
                }
                for try await local in group { sink.value &+= local }
            }
            result.throughput[tasks] = Double(perTask * tasks) / Measure.seconds(ContinuousClock.now - start)
        }
        if sink.value == 42 { print("") }
        return result
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
        let clock = SystemWallClock()
        do {
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let provider = try DriverTokenProvider(endpoint: endpoint, transport: transport, clock: clock)
            let context = DriverAuthorizationContext(vehicleID: "vehicle-42")
            _ = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<callers { group.addTask { try await provider.fetchToken(with: context) } }
                return try await group.reduce(0) { $0 + $1.utf8.count }
            }
            result.fleetAuthRequests = transport.requestCount
        }
        do {
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let seed = SeedSampleProvider(url: URL(string: endpoint.url)!, transport: transport, clock: clock)
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
        result.minimumRequests = count * Int((hours * 3600 / tokenLifetime).rounded(.up))
        let contexts = (0..<count).map { DriverAuthorizationContext(vehicleID: "vehicle-\($0)") }

        // FleetAuth.
        do {
            let clock = ManualWallClock()
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let served = Locked(0)
            let provider = try DriverTokenProvider(
                endpoint: endpoint, transport: transport, clock: clock,
                observer: { event in
                    switch event {
                    case .servedFresh, .servedStale: served.withLock { $0 += 1 }
                    default: break
                    }
                })
            let driver = LatencyDriver(clock: clock)
            let start = clock.now()
            var shortLived = 0
            for step in 0..<steps {
                clock.advance(to: start.addingTimeInterval(Double(step) * interval))
                for context in contexts {
                    let token = try await provider.token(for: context)
                    if token.remainingLifetime(at: clock.now()) < 300 { shortLived += 1 }
                }
                // The backend answers within its latency: a background refresh started in
                // this step gets its answer before the next step's time.
                await provider.waitUntilIdle()
            }
            driver.stop()
            result.fleetAuthRequests = transport.requestCount
            result.fleetAuthWaiting = steps * count - served.withLock { $0 } - count
            result.fleetAuthShortLived = shortLived
        }

        // The seed sample: one provider per vehicle, as each phone runs its own.
        do {
            let clock = ManualWallClock()
            let transport = BenchTransport(clock: clock, latency: 0.2)
            let seeds = contexts.map { _ in
                SeedSampleProvider(url: URL(string: endpoint.url)!, transport: transport, clock: clock)
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
                        expiries[token] = (try? JWTDecoder.decode(token).expiresAt) ?? .distantPast
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

    struct Scale {
        var contexts = 0
        var overheadBytesPerContext = 0.0
        var tokenBytesPerContext = 0.0
        var lookupNanosecondsAtScale = 0.0
        var lookupNanosecondsAtTen = 0.0
        var bareNanosecondsAtScale = 0.0
        var bareNanosecondsAtTen = 0.0
        var ratio: Double { lookupNanosecondsAtScale / lookupNanosecondsAtTen }
        var bareRatio: Double { bareNanosecondsAtScale / bareNanosecondsAtTen }
    }

    static func scale(contexts count: Int = 100_000) async throws -> Scale {
        var result = Scale()
        result.contexts = count
        let clock = SystemWallClock()
        let transport = BenchTransport(clock: clock, latency: 0)
        let engine = try TokenEngine(
            configuration: .init(endpoint: endpoint, transport: transport, clock: clock, cacheCapacity: count + 10))
        let scopes = (0..<count).map { AuthorizationScope.vehicle("vehicle-\($0)") }
        // Warm the allocator with a throwaway engine so its growth is not counted.
        do {
            let warm = try TokenEngine(configuration: .init(endpoint: endpoint, transport: transport, clock: clock))
            for scope in scopes.prefix(2000) { _ = try await warm.token(for: scope) }
        }
        let before = Measure.residentBytes()
        var tokenBytes = 0
        for scope in scopes { tokenBytes += try await engine.token(for: scope).value.utf8.count }
        let after = Measure.residentBytes()
        result.tokenBytesPerContext = Double(tokenBytes) / Double(count)
        result.overheadBytesPerContext = Double(after - before - tokenBytes) / Double(count)

        let sink = Sink()
        var random = SystemRandomNumberGenerator()
        let order = (0..<200_000).map { _ in scopes[Int.random(in: 0..<count, using: &random)] }
        var index = 0
        result.lookupNanosecondsAtScale = try await Measure.medianNanoseconds(iterations: order.count / 31) {
            sink.value &+= try await engine.token(for: order[index % order.count]).lifetime > 0 ? 1 : 0
            index += 1
        }
        let few = Array(scopes.prefix(10))
        let fewOrder = (0..<200_000).map { _ in few[Int.random(in: 0..<10, using: &random)] }
        index = 0
        result.lookupNanosecondsAtTen = try await Measure.medianNanoseconds(iterations: fewOrder.count / 31) {
            sink.value &+= try await engine.token(for: fewOrder[index % fewOrder.count]).lifetime > 0 ? 1 : 0
            index += 1
        }
        // The same access patterns on a bare lock and dictionary of as many entries, to
        // separate the SDK's cost from what random access over 100,000 entries costs anyway.
        let lock = NSLock()
        var table: [AuthorizationScope: Int] = [:]
        for (position, scope) in scopes.enumerated() { table[scope] = position }
        let frozen = table
        index = 0
        result.bareNanosecondsAtScale = await Measure.medianNanoseconds(iterations: order.count / 31) {
            sink.value &+= lock.withLock { frozen[order[index % order.count]] ?? 0 }
            index += 1
        }
        index = 0
        result.bareNanosecondsAtTen = await Measure.medianNanoseconds(iterations: fewOrder.count / 31) {
            sink.value &+= lock.withLock { frozen[fewOrder[index % fewOrder.count]] ?? 0 }
            index += 1
        }
        return result
    }

    // MARK: JWT decoding

    static func decodingThroughput() async throws -> Double {
        let clock = SystemWallClock()
        let response = try await BenchTransport(clock: clock, latency: 0).send(
            TransportRequest(url: URL(string: "https://backend.example.com/token?vehicleId=vehicle-42")!))
        let value =
            ((try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["token"] as? String) ?? ""
        let sink = Sink()
        let nanoseconds = try await Measure.medianNanoseconds(batches: 15, iterations: 2_000) {
            sink.value &+= try JWTDecoder.decode(value).authorization.count
        }
        return 1e9 / nanoseconds
    }
}
