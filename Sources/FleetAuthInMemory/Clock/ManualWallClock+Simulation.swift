import FleetAuthCore

/// What the SDK asks of a manual clock beyond time: where the tasks it starts run, and
/// random draws that are the same on every run.
extension ManualWallClock: SimulatedClock {
    /// The clock's executor: the SDK starts its tasks on it, so that ``settle()`` sees them.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    package var taskExecutor: any TaskExecutor { executor }

    /// A draw in `0...1` from the clock's fixed seed (SplitMix64): the SDK's jitter and
    /// refresh spread are the same on every run of a test.
    package func randomUnit() -> Double {
        state.withLock { state in
            state.randomState &+= 0x9E37_79B9_7F4A_7C15
            var z = state.randomState
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
    }

    /// Starts `operation` in a task on the clock's executor (where the executor is
    /// available), so that ``settle()`` waits for it and for every child task it starts.
    package func startSimulated<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) -> Task<
        T, any Error
    > {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return Task(executorPreference: executor, operation: operation)
        }
        return Task(operation: operation)
    }
}
