// fleetauth-bench: FleetAuth beside the seed sample it replaces and beside the fastest
// lookup physically possible. Run with `swift run -c release fleetauth-bench [--json]`.
import BenchmarkSubjects
import FleetAuthCore
import Foundation

@main
struct FleetAuthBench {
    static let usage = """
        usage: fleetauth-bench [--quick] [--json]     every benchmark, then the table (minutes; --quick: smaller sizes)
               fleetauth-bench --instructions [DESIGN...]   instructions per lookup under callgrind (valgrind)
               fleetauth-bench --http N [--seconds S] [--rounds R] [--back-to-back]
                   FleetAuth over real HTTP beside a bare URLSession: N vehicles every 5 s (or sending
                   back to back), each variant in a process of its own, against a loopback server in C
               fleetauth-bench --reporting N [--minutes M] [--prefetch-wave W]   reporting vehicles on the manual clock
               fleetauth-bench --simulator N | --delivery N | --scale N | --store N | --day-vehicles N [--day-hours H]
                   one benchmark alone, at the size given
        Run from the Benchmarks folder after `swift build -c release`, as .build/release/fleetauth-bench.
        """

    /// Runs what the arguments ask for; a failure is printed as `fleetauth-bench: …` with exit
    /// status 1, not raised as a crash.
    static func main() async {
        do {
            try await run()
        } catch {
            FileHandle.standardError.write(Data("fleetauth-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() async throws {
        if CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") {
            print(usage)
            return
        }
        let json = CommandLine.arguments.contains("--json")
        let quick = CommandLine.arguments.contains("--quick")
        func option(_ name: String) -> Double? {
            CommandLine.arguments.firstIndex(of: name).flatMap { index in
                CommandLine.arguments.indices.contains(index + 1) ? Double(CommandLine.arguments[index + 1]) : nil
            }
        }
        if let variant = CommandLine.arguments.firstIndex(of: "--http-run").map({ CommandLine.arguments[$0 + 1] }) {
            // One variant of the real-HTTP comparison, in the process `--http` starts for it.
            guard let variant = HTTPBench.Variant(rawValue: variant), let port = option("--port"),
                let vehicles = option("--vehicles")
            else { throw BenchError("--http-run needs a variant, --port and --vehicles") }
            let run = try await HTTPBench.run(
                variant: variant, port: Int(port), vehicles: Int(vehicles), seconds: option("--seconds") ?? 30,
                backToBack: CommandLine.arguments.contains("--back-to-back"))
            print(String(decoding: try JSONEncoder().encode(run), as: UTF8.self))
            return
        }
        if let vehicles = option("--http") {
            // FleetAuth over real HTTP beside a bare URLSession, each variant in a process of its own.
            let backToBack = CommandLine.arguments.contains("--back-to-back")
            print(
                try HTTPBench.compare(
                    vehicles: Int(vehicles), seconds: option("--seconds") ?? (backToBack ? 20 : 30),
                    rounds: Int(option("--rounds") ?? 3), backToBack: backToBack))
            return
        }
        if CommandLine.arguments.contains("--instructions") {
            // Instructions per lookup under callgrind: slow, but repeatable on a noisy machine.
            let names = CommandLine.arguments.drop { $0 != "--instructions" }.dropFirst()
                .prefix { !$0.hasPrefix("--") }
            let unknown = names.filter { LookupDesign(rawValue: $0) == nil }
            guard unknown.isEmpty else {
                let known = LookupDesign.allCases.map(\.rawValue).joined(separator: " ")
                let message =
                    "fleetauth-bench: unknown design \(unknown.joined(separator: ", ")); the designs: \(known)"
                FileHandle.standardError.write(Data((message + "\n").utf8))
                exit(2)
            }
            let designs = names.isEmpty ? LookupDesign.timed : names.compactMap { LookupDesign(rawValue: $0) }
            print(InstructionCount.report(try InstructionCount.measure(designs)))
            return
        }
        if let vehicles = option("--day-vehicles") {
            // Only the simulated day, at the size given, for exploring how it scales.
            let start = ContinuousClock.now
            let day = try await Benchmarks.steadyState(vehicles: Int(vehicles), hours: option("--day-hours") ?? 24)
            print(day, ContinuousClock.now - start)
            return
        }
        if let vehicles = option("--simulator") {
            // Only the fleet simulator with the default settings, at the size given.
            print(try await SimulatorBench.run(vehicles: Int(vehicles)))
            return
        }
        if let vehicles = option("--reporting"), let wave = option("--prefetch-wave") {
            // Reporting vehicles whose tokens were fetched in waves of the size given first.
            print(
                try await ReportingBench.run(
                    vehicles: Int(vehicles), simulatedMinutes: option("--minutes") ?? 60, prefetchWave: Int(wave)))
            return
        }
        if let vehicles = option("--reporting") {
            // Only reporting vehicles on the manual clock, at the size (and simulated minutes)
            // given, after their floor (the clock alone) in the same process.
            let (run, floor) = try await ReportingBench.runWithFloor(
                vehicles: Int(vehicles), simulatedMinutes: option("--minutes") ?? 60)
            print(floor)
            print(run)
            print(
                String(
                    format: "ratio to the floor: %.1f per simulated hour, %.1f in the first minute",
                    run.secondsPerSimulatedHour / floor.secondsPerSimulatedHour,
                    run.coldStartSeconds / floor.coldStartSeconds))
            let parts = try await ReportingBench.parts()
            func perUpdate(_ run: ReportingBench.Run) -> Double { run.secondsPerSimulatedHour * 1e6 / 720 / vehicles }
            let rest =
                perUpdate(run) - perUpdate(floor)
                - (parts.lookup + parts.fleetServiceCheck + parts.transportBookkeeping) / 1000
            print(
                String(
                    format:
                        "per update: %.1f µs; floor (task, clock, one sleep) %.1f µs, token lookup %.2f µs, "
                        + "fleet service's check %.1f µs, in-memory transport's bookkeeping %.1f µs, "
                        + "the rest (body, reporter, caller, task switches) %.1f µs; "
                        + "a report answered at once without the service or a sleep %.1f µs",
                    perUpdate(run), perUpdate(floor), parts.lookup / 1000, parts.fleetServiceCheck / 1000,
                    parts.transportBookkeeping / 1000, rest, parts.reportWithoutServiceOrSleep / 1000))
            return
        }
        if let vehicles = option("--delivery") {
            // Only delivery vehicles working their tasks, at the size given.
            print(try await DeliveryBench.run(vehicles: Int(vehicles)))
            return
        }
        if let capacity = option("--store") {
            // Only the cost of a fetch that stores into a full cache of the capacity given.
            print(try await SimulatorBench.storeIntoFullCache(capacity: Int(capacity)))
            return
        }
        if let contexts = option("--scale") {
            // Only memory and lookup at the number of contexts given.
            print(try await Benchmarks.scale(contexts: Int(contexts)))
            return
        }
        func progress(_ text: String) { FileHandle.standardError.write(Data("… \(text)\n".utf8)) }

        progress("lookup against its peers")
        let lookup = try await Benchmarks.lookup()
        progress("1,000 callers on a cold cache")
        let cold = try await Benchmarks.coldStart()
        progress("a simulated day of 100 vehicles")
        let day = try await Benchmarks.steadyState(vehicles: quick ? 10 : 100, hours: quick ? 3 : 24)
        let scaleContexts = quick ? 10_000 : 100_000
        progress("memory and lookup at \(scaleContexts) contexts")
        let scale = try await Benchmarks.scale(contexts: scaleContexts)
        progress("delivery vehicles working 100 tasks a day")
        let delivery = try await DeliveryBench.run(vehicles: quick ? 3 : 20)
        progress("refresh policies through token-backend outages")
        let outages = try await OutageBench.run(quick: quick)
        progress("a fleet that starts together")
        let herd = try await HerdBench.run(quick: quick)
        let bigSimulator = quick ? 10_000 : 100_000
        progress("fleet simulators with the default settings: 1,100 and \(bigSimulator) vehicles")
        let simulators = [
            try await SimulatorBench.run(vehicles: 1100), try await SimulatorBench.run(vehicles: bigSimulator),
        ]
        progress("reporting vehicles on the manual clock: 5,000\(quick ? "" : " and 100,000")")
        var reporting = [try await ReportingBench.runWithFloor(vehicles: 5000, simulatedMinutes: quick ? 2 : 10)]
        if !quick { reporting.append(try await ReportingBench.runWithFloor(vehicles: 100_000, simulatedMinutes: 2)) }
        progress("a store into a full cache of 1,000 and \(bigSimulator) contexts")
        let storeSmall = try await SimulatorBench.storeIntoFullCache(capacity: 1000)
        let storeBig = try await SimulatorBench.storeIntoFullCache(capacity: bigSimulator)

        func f(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
        let floorNanoseconds = "\(f(lookup.floor)) ns"
        var rows: [(String, String, String, String)] = [
            ("lookup: correct floor (Mutex + dictionary + clock)", floorNanoseconds, "", "ratio 1"),
            (
                "lookup: atomic snapshot + clock", "\(f(lookup.nanoseconds[.snapshot]!)) ns", "",
                "ratio \(f(lookup.ratio(.snapshot), 2))"
            ),
            (
                "lookup: actor cache + clock", "\(f(lookup.nanoseconds[.actor]!)) ns", "",
                "ratio \(f(lookup.ratio(.actor), 2))"
            ),
            (
                "lookup: FleetAuth cachedUsableToken", "\(f(lookup.nanoseconds[.fleetAuthSync]!)) ns", "",
                "ratio \(f(lookup.ratio(.fleetAuthSync), 2))"
            ),
            (
                "lookup: FleetAuth fetchToken (async)", "\(f(lookup.nanoseconds[.fleetAuthAsync]!)) ns", "",
                "ratio \(f(lookup.ratio(.fleetAuthAsync), 2))"
            ),
            (
                "lookup: FleetAuth fetchToken from @MainActor", "\(f(lookup.nanoseconds[.fleetAuthMainActor]!)) ns",
                "", "ratio \(f(lookup.ratio(.fleetAuthMainActor), 2))"
            ),
            (
                "lookup: FleetAuth fetchToken, 1,000 scopes in turn", "\(f(lookup.nanoseconds[.fleetAuthMany]!)) ns",
                "", "ratio \(f(lookup.ratio(.fleetAuthMany), 2))"
            ),
            ("throughput, 1 task", "\(f(lookup.throughput[1]! / 1e6, 2)) M/s", "", ""),
            (
                "throughput, 2 tasks on 2 vehicles", "\(f(lookup.throughput[2]! / 1e6, 2)) M/s", "",
                "ratio to 1 task \(f(lookup.twoTasksRatio, 2))"
            ),
            ("throughput, 8 tasks on 8 vehicles", "\(f(lookup.throughput[8]! / 1e6, 2)) M/s", "", ""),
            (
                "throughput, 2 tasks on 1 vehicle", "\(f(lookup.hotKeyThroughput[2]! / 1e6, 2)) M/s",
                "floor \(f(lookup.floorHotKeyRatio, 2)), snapshot \(f(lookup.snapshotHotKeyRatio, 2))",
                "ratio to 1 task \(f(lookup.hotKeyTwoTasksRatio, 2))"
            ),
            (
                "1,000 callers, cold cache: backend requests", "\(cold.fleetAuthRequests)",
                "\(cold.seedRequests) seed sample", "goal 1"
            ),
            (
                "day, \(day.vehicles) vehicles: callers that waited", "\(day.fleetAuthWaiting)",
                "\(day.seedWaiting) seed sample", "goal 0"
            ),
            (
                "day: backend requests", "\(day.fleetAuthRequests)", "\(day.seedRequests) seed sample",
                "minimum \(day.minimumRequests) in step; goal ≤ 28 per vehicle-day (\(28 * day.vehicles))"
            ),
            (
                "day: tokens handed out with < 5 min left", "\(day.fleetAuthShortLived)",
                "\(day.seedShortLived) seed sample", "goal 0"
            ),
            (
                "memory per context beyond the token", "\(f(scale.overheadBytesPerContext, 0)) B",
                "token \(f(scale.tokenBytesPerContext, 0)) B, \(scale.contexts) contexts", "goal < 1024 B"
            ),
            (
                "lookup at \(scale.contexts) vs 10 contexts", "\(f(scale.lookupNanosecondsAtScale)) ns",
                "\(f(scale.lookupNanosecondsAtTen)) ns", "ratio \(f(scale.ratio, 2))"
            ),
        ]
        rows.append(
            (
                "delivery: a vehicle and 100 of its tasks in a row", "\(delivery.requestsForAVehicleAndAHundredTasks)",
                "token requests", "goal ≤ 2"
            ))
        rows.append(
            (
                "delivery, \(delivery.vehicles) vehicles, \(delivery.tasksPerVehicleDay) tasks a day",
                "\(f(delivery.requestsPerVehicleDay, 1))", "token requests per vehicle-day", "goal ≤ 28"
            ))
        for run in simulators {
            rows.append(
                (
                    "simulator, \(run.vehicles) vehicles, defaults: requests", "\(f(run.firstHourPerVehicle, 2))",
                    "per vehicle in the first hour, then \(f(run.perVehicleDay, 1)) per vehicle-day",
                    "goal ≤ 2.5 and ≤ 28"
                ))
            rows.append(
                (
                    "simulator, \(run.vehicles) vehicles: heap per vehicle", "\(f(run.heapBytesPerVehicle, 0)) B",
                    "token \(f(run.tokenBytes, 0)) B; resident \(f(run.residentBytesPerVehicle, 0)) B (\(f(run.trimmedResidentBytesPerVehicle, 0)) B with free pages returned); \(f(run.secondsPerSimulatedHour, 1)) s per simulated hour",
                    "goal ≤ token + 1024 B"
                ))
        }
        for (run, floor) in reporting {
            rows.append(
                (
                    "reporting, \(run.vehicles) vehicles every 5 s, manual clock",
                    "\(f(run.secondsPerSimulatedHour, 0)) s",
                    "per simulated hour (\(f(run.simulatedMinutes, 0)) min run, cold start \(f(run.coldStartSeconds, 1)) s), floor \(f(floor.secondsPerSimulatedHour, 0)) s (cold start \(f(floor.coldStartSeconds, 1)) s); peak +\(f(Double(run.peakResidentGrowthBytes) / 1e6, 0)) MB, +\(f(Double(run.lateResidentGrowthBytes) / 1e6, 0)) MB in its second half; \(run.failed) failed, \(f(run.tokensPerVehicle, 2)) tokens per vehicle",
                    "ratio \(f(run.secondsPerSimulatedHour / floor.secondsPerSimulatedHour, 1)) (first minute \(f(run.coldStartSeconds / floor.coldStartSeconds, 1))); goal ≤ 5 and 1 GiB"
                ))
        }
        rows.append(
            (
                "fetch storing into a full cache, \(bigSimulator) vs 1,000", "\(f(storeBig * 1e6, 1)) µs",
                "\(f(storeSmall * 1e6, 1)) µs", "ratio \(f(storeBig / storeSmall, 2))"
            ))
        let width = rows.map(\.0.count).max()!
        print("FleetAuth benchmarks (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
        for row in rows {
            print(
                "  " + row.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + row.1.padding(toLength: 11, withPad: " ", startingAt: 0) + "  "
                    + [row.2, row.3].filter { !$0.isEmpty }.joined(separator: "; "))
        }
        print("Refresh policies: one vehicle every 5 s, 1-hour tokens; failed lookups at the worst outage start")
        let policyWidth = outages.map(\.name.count).max()!
        for row in outages {
            print(
                "  " + row.name.padding(toLength: policyWidth, withPad: " ", startingAt: 0)
                    + "  \(row.requestsPerVehicleDay) requests/vehicle-day"
                    + "  5-min outage: \(row.failedIn5MinuteOutage) failed  10-min outage: \(row.failedIn10MinuteOutage) failed"
            )
        }
        print(
            "Fleet that starts together: 1-hour tokens, lookups every 5 s, first lookups within one minute, 0.2 s latency"
        )
        for row in herd.rows {
            print(
                "  " + row.name.padding(toLength: herd.rows.map(\.name.count).max()!, withPad: " ", startingAt: 0)
                    + "  busiest minute \(f(row.busiestMinute, 2))× mean, busiest 5 min \(f(row.busiestFiveMinutes, 2))×;"
                    + " first hour \(f(row.firstHour, 2))/vehicle, then \(f(row.perVehicleDay, 1))/vehicle-day;"
                    + " \(row.failedLookups) failed lookups")
        }
        print(
            "  \(herd.outageVehicles) vehicles, 1-hour token-backend outage: \(f(herd.outageRequestsPerSecond, 1)) requests/s in its last minute,"
                + " peak \(herd.peakOnReturn)/s on return")
        if json {
            let object: [String: Any] = [
                "herd_busiest_minute_over_mean": herd.rows[0].busiestMinute,
                "herd_busiest_5_minutes_over_mean": herd.rows[0].busiestFiveMinutes,
                "herd_requests_per_vehicle_first_hour": herd.rows[0].firstHour,
                "herd_requests_per_vehicle_day": herd.rows[0].perVehicleDay,
                "herd_failed_lookups": herd.rows.map(\.failedLookups).reduce(0, +),
                "herd_phones_busiest_5_minutes_over_mean": herd.rows[1].busiestFiveMinutes,
                "herd_unspread_busiest_minute_over_mean": herd.rows[2].busiestMinute,
                "herd_outage_last_minute_requests_per_second": herd.outageRequestsPerSecond,
                "herd_outage_peak_per_second_on_return": herd.peakOnReturn,
                "outage_policies": outages.map {
                    [
                        "policy": $0.name, "requests_per_vehicle_day": $0.requestsPerVehicleDay,
                        "failed_5_min_outage": $0.failedIn5MinuteOutage,
                        "failed_10_min_outage": $0.failedIn10MinuteOutage,
                    ] as [String: Any]
                },
                "lookup_ns": Dictionary(
                    uniqueKeysWithValues: lookup.nanoseconds.map { ($0.key.rawValue, $0.value) }),
                "lookup_ratio_to_floor": Dictionary(
                    uniqueKeysWithValues: lookup.nanoseconds.map { ($0.key.rawValue, $0.value / lookup.floor) }),
                "throughput_calls_per_s": [
                    "1": lookup.throughput[1]!, "2": lookup.throughput[2]!, "8": lookup.throughput[8]!,
                ],
                "throughput_2_tasks_ratio": lookup.twoTasksRatio,
                "hot_key_2_tasks_ratio": lookup.hotKeyTwoTasksRatio,
                "hot_key_2_tasks_ratio_floor": lookup.floorHotKeyRatio,
                "hot_key_2_tasks_ratio_snapshot": lookup.snapshotHotKeyRatio,
                "day_backend_requests": day.fleetAuthRequests,
                "day_minimum_requests": day.minimumRequests,
                "day_tokens_under_minimum_life": day.fleetAuthShortLived,
                "cold_concurrent_backend_requests": cold.fleetAuthRequests,
                "cold_concurrent_backend_requests_seed": cold.seedRequests,
                "steady_state_waiting_callers": day.fleetAuthWaiting,
                "steady_state_waiting_callers_seed": day.seedWaiting,
                "steady_state_backend_requests": day.fleetAuthRequests,
                "steady_state_backend_requests_seed": day.seedRequests,
                "steady_state_minimum_requests": day.minimumRequests,
                "steady_state_short_lived_tokens": day.fleetAuthShortLived,
                "steady_state_short_lived_tokens_seed": day.seedShortLived,
                "memory_overhead_bytes_per_context": scale.overheadBytesPerContext,
                "token_bytes_per_context": scale.tokenBytesPerContext,
                "contexts": scale.contexts,
                "lookup_ns_at_scale": scale.lookupNanosecondsAtScale,
                "lookup_ns_at_10": scale.lookupNanosecondsAtTen,
                "lookup_scale_ratio": scale.ratio,
                "simulators": simulators.map {
                    [
                        "vehicles": $0.vehicles, "first_hour_requests_per_vehicle": $0.firstHourPerVehicle,
                        "requests_per_vehicle_day": $0.perVehicleDay,
                        "resident_bytes_per_vehicle": $0.residentBytesPerVehicle,
                        "resident_trimmed_bytes_per_vehicle": $0.trimmedResidentBytesPerVehicle,
                        "heap_bytes_per_vehicle": $0.heapBytesPerVehicle, "token_bytes": $0.tokenBytes,
                        "seconds_per_simulated_hour": $0.secondsPerSimulatedHour,
                    ] as [String: Any]
                },
                "delivery_requests_vehicle_and_100_tasks": delivery.requestsForAVehicleAndAHundredTasks,
                "delivery_requests_per_vehicle_day": delivery.requestsPerVehicleDay,
                "full_cache_store_seconds_1000": storeSmall,
                "full_cache_store_seconds_large": storeBig,
                "full_cache_store_large_contexts": bigSimulator,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
