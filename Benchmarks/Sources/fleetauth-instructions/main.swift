// fleetauth-instructions: one lookup design's lookups alone, for `fleetauth-bench
// --instructions` to run under callgrind.
//
//   fleetauth-instructions DESIGN ITERATIONS
//
// Valgrind (3.19, Debian 12) cannot follow the threads that Swift's global executor starts,
// so this program runs every task on its main thread: it hooks the global and main-actor
// enqueues and drains the jobs itself, one at a time. That is also what makes the count
// repeatable.
import BenchmarkSubjects
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3, let design = LookupDesign(rawValue: arguments[1]), let iterations = Int(arguments[2])
else {
    let names = LookupDesign.allCases.map(\.rawValue).joined(separator: "|")
    FileHandle.standardError.write(Data("usage: fleetauth-instructions \(names) ITERATIONS\n".utf8))
    exit(2)
}

MainThreadExecutor.install()
// Detached: a task of the top-level code would be the main actor's, whose enqueue this
// toolchain does not route through the hook until the first job runs.
let outcome = Locked<Result<Int, any Error>?>(nil)
Task.detached {
    do {
        let subjects = try await LookupDesign.Subjects.make()
        outcome.withLock { $0 = .success(0) }
        let sum = try await design.run(subjects, iterations: iterations)
        outcome.withLock { $0 = .success(sum) }
    } catch {
        outcome.withLock { $0 = .failure(error) }
    }
}
MainThreadExecutor.drain { if case .success(let sum) = outcome.withLock({ $0 }), sum != 0 { true } else { false } }
switch outcome.withLock({ $0 }) {
case .success(let sum)?: exit(sum == 42 ? 3 : 0)
case .failure(let error)?:
    FileHandle.standardError.write(Data("fleetauth-instructions: \(error)\n".utf8))
    exit(1)
case nil:
    FileHandle.standardError.write(Data("fleetauth-instructions: the lookups did not finish within 10 s\n".utf8))
    exit(1)
}
