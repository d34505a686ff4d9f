import BenchmarkSubjects
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs every Swift concurrency job on the main thread: the runtime's global and
/// main-executor enqueues are redirected here (through its public hooks) and ``drain(until:)``
/// runs the jobs in order.
enum MainThreadExecutor {
    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// Jobs waiting to run. `UnownedJob` is a plain reference the runtime hands over.
    nonisolated(unsafe) private static var jobs: [UnownedJob] = []
    private static let lock = NSLock()

    /// `RTLD_DEFAULT`: search every loaded image.
    private static var defaultHandle: UnsafeMutableRawPointer? {
        #if os(Linux)
            nil
        #else
            UnsafeMutableRawPointer(bitPattern: -2)
        #endif
    }

    /// Points the runtime's enqueue hooks at ``jobs``.
    static func install() {
        for symbol in ["swift_task_enqueueGlobal_hook", "swift_task_enqueueMainExecutor_hook"] {
            guard let address = dlsym(defaultHandle, symbol) else {
                fatalError("the concurrency runtime has no \(symbol)")
            }
            address.assumingMemoryBound(to: Hook?.self).pointee = { job, _ in
                MainThreadExecutor.lock.lock()
                MainThreadExecutor.jobs.append(job)
                MainThreadExecutor.lock.unlock()
            }
        }
    }

    /// Runs queued jobs until `done` holds; waits for more (a timer's, another thread's)
    /// while the queue is empty, for at most 10 s in all.
    static func drain(until done: () -> Bool) {
        var idle = 0
        while !done(), idle < 100_000 {
            lock.lock()
            let next = jobs.isEmpty ? nil : jobs.removeFirst()
            lock.unlock()
            guard let next else {
                idle += 1
                usleep(100)
                continue
            }
            next.runSynchronously(on: MainActor.sharedUnownedExecutor)
        }
    }
}
