import BenchmarkSubjects
import Foundation

/// Timing and memory helpers for the benchmarks.
enum Measure {
    /// Nanoseconds per iteration of each body, as medians of `batches` timed batches of
    /// `iterations` each, the bodies' batches taken in turn: noise that comes and goes on
    /// a shared machine then weighs on every body alike, and their ratios hold.
    static func interleavedMedianNanoseconds(
        batches: Int = 31, iterations: Int, _ bodies: [() async throws -> Void]
    ) async throws -> [Double] {
        let clock = ContinuousClock()
        var samples = Array(repeating: [Double](), count: bodies.count)
        for _ in 0..<batches {
            for (index, body) in bodies.enumerated() {
                let start = clock.now
                for _ in 0..<iterations { try await body() }
                samples[index].append(seconds(clock.now - start) * 1e9 / Double(iterations))
            }
        }
        return samples.map(median)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Resident memory of this process in bytes (Linux `/proc/self/statm`; 0 elsewhere).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Resident memory after asking the allocator to return its free pages to the system
    /// (glibc's `malloc_trim(0)`, looked up at run time): what stays resident because it is
    /// in use, not because it was once used. The plain figure where there is no such call.
    static func trimmedResidentBytes() -> Int {
        #if canImport(Glibc)
            typealias Trim = @convention(c) (Int) -> Int32
            if let trim = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") {
                _ = unsafeBitCast(trim, to: Trim.self)(0)
            }
        #endif
        return residentBytes()
    }

    /// Bytes the allocator has handed out and not taken back: what the process holds,
    /// without the pages that freed memory leaves resident. Read from glibc's `malloc_stats`
    /// (looked up at run time; it writes to standard error, which is sent to a file for the
    /// call); 0 where there is no such call.
    static func heapBytesInUse() -> Int {
        #if canImport(Glibc)
            typealias Stats = @convention(c) () -> Void
            guard let stats = dlsym(dlopen(nil, RTLD_NOW), "malloc_stats") else { return 0 }
            let path = NSTemporaryDirectory() + "fleetauth-bench-malloc-\(getpid()).txt"
            let file = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
            let savedError = dup(2)
            dup2(file, 2)
            unsafeBitCast(stats, to: Stats.self)()
            dup2(savedError, 2)
            close(savedError)
            close(file)
            defer { unlink(path) }
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            guard let total = text.range(of: "Total (incl. mmap):") else { return 0 }
            let line = text[total.upperBound...].split(separator: "\n").first { $0.contains("in use bytes") }
            return line.flatMap { Int($0.split(separator: "=").last?.trimmingCharacters(in: .whitespaces) ?? "") } ?? 0
        #else
            return 0
        #endif
    }
}

/// Keeps results alive so the optimizer cannot drop the work that made them.
final class Sink: @unchecked Sendable {
    // Safe because only the thread that owns a benchmark loop writes it, and it is read
    // only after that loop has finished; its value is never used for anything but printing.
    var value = 0
}
