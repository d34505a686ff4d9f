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

    /// Resident bytes once the allocator has given its free pages back (glibc's
    /// `malloc_trim`, looked up at run time): what the process holds, without the pages
    /// that freed memory leaves resident. Plain resident bytes where there is no such call.
    static func residentBytesTrimmed() -> Int {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        if let trim = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") { _ = unsafeBitCast(trim, to: Trim.self)(0) }
        #endif
        return residentBytes()
    }
}

/// Keeps results alive so the optimizer cannot drop the work that made them.
final class Sink: @unchecked Sendable {
    // Safe because only the thread that owns a benchmark loop writes it, and it is read
    // only after that loop has finished; its value is never used for anything but printing.
    var value = 0
}
