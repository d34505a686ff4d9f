/// The condition `eventually` waited for never held.
package struct ConditionNeverHeld: Error, CustomStringConvertible {
    /// Where the wait was.
    package let location: String
    /// `condition never held at File.swift:12`.
    package var description: String { "condition never held at \(location)" }
}

/// Yields until `probe` returns a value, for state that other tasks are about to reach.
/// Throws ``ConditionNeverHeld`` (failing the test) after `yields` tries. It never sleeps.
package func eventually<T>(
    _ probe: () -> T?, yields: Int = 100_000, fileID: String = #fileID, line: Int = #line
) async throws -> T {
    for _ in 0..<yields {
        if let value = probe() { return value }
        await Task.yield()
    }
    throw ConditionNeverHeld(location: "\(fileID):\(line)")
}
