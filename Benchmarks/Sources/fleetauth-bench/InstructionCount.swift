import BenchmarkSubjects
import Foundation

/// Instructions per lookup, counted by callgrind: repeatable where time is not. Each
/// design runs in a child process under `valgrind --tool=callgrind` twice, with two
/// iteration counts, the two at once; the difference over the difference in lookups is the
/// per-lookup count, free of start-up and set-up.
enum InstructionCount {
    static let fewer = 20_000
    static let more = 120_000

    /// The two iteration counts of `design`: an update takes about a hundred lookups'
    /// instructions, so a tenth as many.
    static func iterations(of design: LookupDesign) -> (fewer: Int, more: Int) {
        design.isLookup ? (fewer, more) : (fewer / 10, more / 10)
    }

    /// Per-lookup (per-update) instructions of every design (the ones given, or all).
    static func measure(_ designs: [LookupDesign]) throws -> [(LookupDesign, Double)] {
        try designs.map { design in
            let (fewer, more) = iterations(of: design)
            let low = try started(design, iterations: fewer)
            let high = try started(design, iterations: more)
            return (design, Double(try high() - low()) / Double(more - fewer))
        }
    }

    /// Starts a callgrind run of `design`; the closure returned waits for it and returns
    /// the instructions collected over the whole run.
    private static func started(_ design: LookupDesign, iterations: Int) throws -> () throws -> Int {
        let process = Process()
        // The child sits beside this executable in the build folder.
        let child = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("fleetauth-instructions").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", child, design.rawValue,
            String(iterations),
        ]
        // Hash seeds fixed, so that probe sequences (and counts) repeat from run to run.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return {
            let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return try count(in: output, of: process, design)
        }
    }

    /// The total that callgrind's summary in `output` reports.
    private static func count(in output: String, of process: Process, _ design: LookupDesign) throws -> Int {
        guard process.terminationStatus == 0,
            let line = output.split(separator: "\n").first(where: { $0.contains("Collected :") }),
            let count = line.split(separator: " ").last.flatMap({ Int($0) })
        else {
            throw BenchError(
                "callgrind run of \(design.rawValue) failed (is Debian's valgrind installed?): \(output.suffix(400))")
        }
        return count
    }

    /// A table of per-lookup instructions with each lookup's ratio to the floor.
    static func report(_ counts: [(LookupDesign, Double)]) -> String {
        let floor = counts.first { $0.0 == .floor }?.1
        let width = counts.map(\.0.title.count).max() ?? 0
        let updates = iterations(of: .report)
        var lines = [
            "Instructions per lookup, or per update for the report (callgrind, \(more - fewer) lookups or \(updates.more - updates.fewer) updates, set-up subtracted)"
        ]
        for (design, count) in counts {
            let ratio = floor.flatMap { design.isLookup ? String(format: "  %.2f× the floor", count / $0) : nil } ?? ""
            lines.append(
                "  " + design.title.padding(toLength: width, withPad: " ", startingAt: 0)
                    + String(format: "  %6.0f", count) + ratio)
        }
        return lines.joined(separator: "\n")
    }
}

/// A benchmark that could not run, and why.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
