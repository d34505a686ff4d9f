// FleetAuth over real HTTP beside the code a simulator's author would otherwise write: a bare
// URLSession and a dictionary of tokens under a lock. Every variant runs in a process of its own
// against one loopback token backend and fleet service written in C
// (`loopback-fleet-service`), so that the server costs little and the figures are the client's;
// the variants alternate, round after round, and each round's ratios are taken against the
// hand-written code's run of the same round.
import FleetAuthCore
import FleetAuthDriver
import FleetAuthFleetService
import FleetAuthURLSession
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum HTTPBench {
    /// What sends the updates.
    enum Variant: String, CaseIterable, Codable {
        /// One token fetched once and one prepared request per vehicle, through a bare URLSession:
        /// what sending the updates costs with no token logic at all.
        case floor
        /// A bare URLSession, each vehicle's token fetched on first use and kept in a dictionary
        /// under a lock until a minute before it expires.
        case handWritten = "hand-written"
        /// `DriverTokenProvider` and a `VehicleReporter` per vehicle over `URLSessionTransport()`.
        case fleetAuth = "fleetauth"
        /// The same over the app session the Fleet simulators article shows (one for the
        /// provider, one for the vehicles).
        case fleetAuthAppSession = "fleetauth-app-session"
    }

    /// One variant's run, as its process reports it.
    struct Run: Codable {
        var variant: Variant
        var vehicles: Int
        var seconds: Double
        var backToBack: Bool
        /// Process CPU (user and system) over the measured window.
        var cpuSeconds: Double
        /// Context switches of the process's threads over the window (voluntary and not): the
        /// thread wake-ups an update costs.
        var contextSwitches: Int
        /// Updates accepted in the window.
        var accepted: Int
        /// Updates accepted in the whole run, its warm-up included: what whole-process counts
        /// (instructions, system calls) divide by.
        var acceptedInRun: Int
        /// Turns due in the window (periodic runs), each one update of one vehicle.
        var turns: Int
        /// Turns whose update was accepted within 5 s of its moment.
        var onTime: Int
        /// The process's resident memory before the vehicles were made, and at its peak.
        var baselineResidentBytes: Int
        var peakResidentBytes: Int

        var cpuPerThousand: Double { accepted == 0 ? .infinity : cpuSeconds * 1000 / Double(accepted) }
        var updatesPerSecond: Double { Double(accepted) / seconds }
        var onTimeShare: Double { turns == 0 ? 0 : Double(onTime) / Double(turns) }
        var bytesPerVehicle: Double { Double(peakResidentBytes - baselineResidentBytes) / Double(vehicles) }
    }

    static let reportInterval = 5.0
    static let providerID = "loopback-project"

    // MARK: - One variant, in its own process

    /// Runs `variant` against the server at `port`: `vehicles` vehicles reporting every 5 s
    /// (after a first cycle that fetches their tokens), or sending back to back, for `seconds`.
    static func run(variant: Variant, port: Int, vehicles: Int, seconds: Double, backToBack: Bool) async throws -> Run {
        let base = "http://127.0.0.1:\(port)"
        let baseline = peakResidentBytes()
        let send = try await sender(variant, base: base, vehicles: vehicles)
        let warmUp = backToBack ? 3.0 : reportInterval
        let start = ContinuousClock.now
        let windowStart = start + .seconds(warmUp)
        let windowEnd = windowStart + .seconds(seconds)
        let counts = Tally()
        async let atStart: (cpu: Double, switches: Int) = {
            try? await Task.sleep(until: windowStart, clock: .continuous)
            return (cpuSeconds(), contextSwitches())
        }()
        await withTaskGroup(of: Void.self) { group in
            for vehicle in 0..<vehicles {
                group.addTask {
                    if backToBack {
                        while ContinuousClock.now < windowEnd {
                            let accepted = await send(vehicle)
                            let now = ContinuousClock.now
                            let inWindow = now >= windowStart && now < windowEnd
                            if accepted {
                                counts.value.withLock {
                                    $0.inRun += 1
                                    if inWindow { $0.accepted += 1 }
                                }
                            }
                        }
                        return
                    }
                    var next = start + .milliseconds(Int(reportInterval * 1000) * vehicle / vehicles)
                    while next < windowEnd {
                        try? await Task.sleep(until: next, clock: .continuous)
                        let inWindow = next >= windowStart
                        let accepted = await send(vehicle)
                        let late = ContinuousClock.now - next > .seconds(reportInterval)
                        if accepted { counts.value.withLock { $0.inRun += 1 } }
                        if inWindow {
                            counts.value.withLock {
                                $0.turns += 1
                                if accepted { $0.accepted += 1 }
                                if accepted, !late { $0.onTime += 1 }
                            }
                        }
                        // Turns that passed while the update was in flight are skipped, and missed.
                        next += .seconds(reportInterval)
                        while next <= .now {
                            if next >= windowStart, next < windowEnd { counts.value.withLock { $0.turns += 1 } }
                            next += .seconds(reportInterval)
                        }
                    }
                }
            }
        }
        let (cpuAtEnd, switchesAtEnd) = (cpuSeconds(), contextSwitches())
        let (cpuAtStart, switchesAtStart) = await atStart
        let (accepted, turns, onTime, inRun) = counts.value.withLock { $0 }
        return Run(
            variant: variant, vehicles: vehicles, seconds: seconds, backToBack: backToBack,
            cpuSeconds: cpuAtEnd - cpuAtStart, contextSwitches: switchesAtEnd - switchesAtStart, accepted: accepted,
            acceptedInRun: inRun, turns: turns, onTime: onTime,
            baselineResidentBytes: baseline, peakResidentBytes: peakResidentBytes())
    }

    /// The variant's way to send vehicle `index`'s update; true when it was accepted.
    static func sender(
        _ variant: Variant, base: String, vehicles: Int
    ) async throws -> @Sendable (Int) async -> Bool {
        switch variant {
        case .floor:
            let session = bareSession()
            let fleet = HandWrittenFleet(base: base, session: session)
            guard let token = await fleet.fetchToken(vehicleID: "sim-0")?.value else {
                throw BenchError("the floor could not fetch its token from \(base)")
            }
            let body = HandWrittenFleet.updateBody(latitude: 52.52, longitude: 13.40)
            let requests = (0..<vehicles).map { fleet.updateRequest(vehicleID: "sim-\($0)", token: token, body: body) }
            return { index in
                guard let (_, response) = try? await session.data(for: requests[index]) else { return false }
                return (response as? HTTPURLResponse)?.statusCode == 200
            }
        case .handWritten:
            let fleet = HandWrittenFleet(base: base, session: bareSession())
            let ids = (0..<vehicles).map { "sim-\($0)" }
            return { index in await fleet.report(vehicleID: ids[index], latitude: 52.52, longitude: 13.40) }
        case .fleetAuth, .fleetAuthAppSession:
            let appSession = variant == .fleetAuthAppSession
            let providerTransport = appSession ? simulatorTransport() : URLSessionTransport()
            let fleetTransport = appSession ? simulatorTransport() : providerTransport
            let provider = try DriverTokenProvider(
                endpoint: TokenEndpoint(url: "\(base)/token/driver/{vehicleId}", format: .jwtWithExpirationTimestamp),
                transport: providerTransport)
            let fleet = FleetServiceEndpoint(baseURL: URL(string: base)!, providerID: providerID)
            let reporters = try (0..<vehicles).map {
                try VehicleReporter(
                    fleetService: fleet, vehicleID: "sim-\($0)", authorization: provider, transport: fleetTransport)
            }
            return { index in
                let location = VehicleLocation(latitude: 52.52, longitude: 13.40, speed: 8, timestamp: .now)
                return (try? await reporters[index].report(location)) != nil
            }
        }
    }

    /// The session the hand-written code and the floor send through: ephemeral, with as many
    /// connections per host as FleetAuth's own sessions open.
    static func bareSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        return URLSession(configuration: configuration)
    }

    /// The Fleet simulators article's app session.
    static func simulatorTransport() -> URLSessionTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 128
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSessionTransport(session: URLSession(configuration: configuration))
    }

    #if canImport(Glibc)
        static let rusageSelf = RUSAGE_SELF.rawValue
    #else
        static let rusageSelf = RUSAGE_SELF
    #endif

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(rusageSelf, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func contextSwitches() -> Int {
        var usage = rusage()
        getrusage(rusageSelf, &usage)
        return usage.ru_nvcsw + usage.ru_nivcsw
    }

    /// The process's peak resident memory so far, in bytes. On Linux its own high-water mark
    /// (`VmHWM`): there `ru_maxrss` keeps the peak of the process that started it across
    /// `exec`, so a child of the comparison would read its parent's peak as its baseline, and a
    /// peak of its own below that as none.
    static func peakResidentBytes() -> Int {
        #if os(Linux)
            if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kilobytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({
                    Int($0)
                })
            {
                return kilobytes * 1024
            }
        #endif
        var usage = rusage()
        getrusage(rusageSelf, &usage)
        #if canImport(Darwin)
            return Int(usage.ru_maxrss)
        #else
            return Int(usage.ru_maxrss) * 1024
        #endif
    }

    // MARK: - The comparison, in the parent process

    /// Starts the loopback server, runs every variant `rounds` times in turn (each round in
    /// another order), and returns the table.
    static func compare(vehicles: Int, seconds: Double, rounds: Int, backToBack: Bool) throws -> String {
        let folder = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0]))
            .deletingLastPathComponent()
        let serverFile = folder.appendingPathComponent("loopback-fleet-service")
        guard FileManager.default.isExecutableFile(atPath: serverFile.path) else {
            throw BenchError(
                "--http needs loopback-fleet-service beside fleetauth-bench, and \(serverFile.path) is not there: run `swift build -c release` in the Benchmarks folder, then .build/release/fleetauth-bench from there"
            )
        }
        let server = Process()
        server.executableURL = serverFile
        let serverInput = Pipe()
        let serverOutput = Pipe()
        server.standardInput = serverInput
        server.standardOutput = serverOutput
        try server.run()
        defer {
            try? serverInput.fileHandleForWriting.close()
            server.waitUntilExit()
        }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let byte = serverOutput.fileHandleForReading.readData(ofLength: 1)
            guard !byte.isEmpty else { throw BenchError("loopback-fleet-service printed no port") }
            line.append(byte)
        }
        guard
            let port = Int(
                String(decoding: line, as: UTF8.self).dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw BenchError("loopback-fleet-service printed no port") }

        var runs: [[Variant: Run]] = []
        let variants = Variant.allCases
        for round in 0..<rounds {
            var results: [Variant: Run] = [:]
            for offset in 0..<variants.count {
                let variant = variants[(round + offset) % variants.count]
                FileHandle.standardError.write(Data("… round \(round + 1) of \(rounds): \(variant.rawValue)\n".utf8))
                results[variant] = try runChild(
                    variant: variant, port: port, vehicles: vehicles, seconds: seconds, backToBack: backToBack)
            }
            runs.append(results)
        }
        return table(runs, vehicles: vehicles, seconds: seconds, backToBack: backToBack)
    }

    /// Runs one variant in a child process of this binary and reads its figures.
    static func runChild(variant: Variant, port: Int, vehicles: Int, seconds: Double, backToBack: Bool) throws -> Run {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments =
            [
                "--http-run", variant.rawValue, "--port", "\(port)", "--vehicles", "\(vehicles)", "--seconds",
                "\(seconds)",
            ]
            + (backToBack ? ["--back-to-back"] : [])
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            throw BenchError("the \(variant.rawValue) run exited with \(child.terminationStatus)")
        }
        return try JSONDecoder().decode(Run.self, from: data)
    }

    static func table(_ runs: [[Variant: Run]], vehicles: Int, seconds: Double, backToBack: Bool) -> String {
        func f(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }
        func median(_ values: [Double]) -> Double { Measure.median(values) }
        var lines = [
            backToBack
                ? "\(vehicles) vehicles sending back to back, \(f(seconds, 0)) s, \(runs.count) rounds (medians; ratios paired per round against hand-written)"
                : "\(vehicles) vehicles, an update every 5 s each, \(f(seconds, 0)) s window, \(runs.count) rounds (medians; ratios paired per round against hand-written)",
            "| variant | CPU s per 1,000 accepted | CPU ratio | updates/s | throughput ratio | on time | memory per vehicle | memory ratio |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for variant in Variant.allCases {
            let own = runs.compactMap { $0[variant] }
            let paired = runs.compactMap { round in
                round[variant].flatMap { run in round[.handWritten].map { (run, $0) } }
            }
            lines.append(
                "| \(variant.rawValue) | \(f(median(own.map(\.cpuPerThousand)))) "
                    + "| \(f(median(paired.map { $0.0.cpuPerThousand / $0.1.cpuPerThousand }), 2)) "
                    + "| \(f(median(own.map(\.updatesPerSecond)), 0)) "
                    + "| \(f(median(paired.map { $0.0.updatesPerSecond / $0.1.updatesPerSecond }), 2)) "
                    + "| \(backToBack ? "" : f(median(own.map(\.onTimeShare)) * 100, 1) + "%") "
                    + "| \(f(median(own.map(\.bytesPerVehicle)) / 1024, 1)) KB "
                    + "| \(f(median(paired.map { $0.0.bytesPerVehicle / $0.1.bytesPerVehicle }), 2)) |")
        }
        return lines.joined(separator: "\n")
    }
}

/// A run's counts, shared by its vehicles' tasks.
final class Tally: Sendable {
    let value = Mutex((accepted: 0, turns: 0, onTime: 0, inRun: 0))
}

/// The code a simulator's author writes without FleetAuth: a bare URLSession, each vehicle's
/// token fetched on first use and kept in a dictionary under a lock until a minute before it
/// expires, the update's JSON written by hand.
final class HandWrittenFleet: Sendable {
    let base: String
    let session: URLSession
    let tokens = Mutex<[String: (value: String, expiresAt: Date)]>([:])

    init(base: String, session: URLSession) {
        self.base = base
        self.session = session
    }

    func report(vehicleID: String, latitude: Double, longitude: Double) async -> Bool {
        let cached = tokens.withLock { $0[vehicleID] }
        var token = cached?.value
        if cached == nil || cached!.expiresAt.timeIntervalSinceNow < 60 {
            guard let fetched = await fetchToken(vehicleID: vehicleID) else { return false }
            tokens.withLock { $0[vehicleID] = fetched }
            token = fetched.value
        }
        let request = updateRequest(
            vehicleID: vehicleID, token: token!, body: Self.updateBody(latitude: latitude, longitude: longitude))
        guard let (_, response) = try? await session.data(for: request) else { return false }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    func fetchToken(vehicleID: String) async -> (value: String, expiresAt: Date)? {
        guard let (data, response) = try? await session.data(from: URL(string: "\(base)/token/driver/\(vehicleID)")!),
            (response as? HTTPURLResponse)?.statusCode == 200,
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let jwt = json["jwt"] as? String, let expiry = json["expirationTimestamp"] as? Double
        else { return nil }
        return (jwt, Date(timeIntervalSince1970: expiry / 1000))
    }

    func updateRequest(vehicleID: String, token: String, body: Data) -> URLRequest {
        var request = URLRequest(
            url: URL(string: "\(base)/v1/providers/\(HTTPBench.providerID)/vehicles/\(vehicleID)")!)
        request.httpMethod = "PUT"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.httpBody = body
        return request
    }

    static func updateBody(latitude: Double, longitude: Double) -> Data {
        Data(
            #"{"lastLocation":{"location":{"latitude":\#(latitude),"longitude":\#(longitude)},"speed":8}}"#.utf8)
    }
}
