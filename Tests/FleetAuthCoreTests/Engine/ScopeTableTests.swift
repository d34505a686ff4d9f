import FleetAuthCore
import Foundation
import Testing

/// The cache's index (``ScopeTable``): one record per bucket, found by the scope, moved
/// by growth and removal with every move reported.
@Suite("Scope table: one cache line per scope, found by its IDs")
struct ScopeTableTests {
    /// Inserts `scopes` at positions 0, 1, … and returns where each position's record is,
    /// as the moves report it.
    func fill(_ table: ScopeTable, with scopes: [AuthorizationScope]) -> [Int: Int] {
        var buckets: [Int: Int] = [:]
        for (position, scope) in scopes.enumerated() {
            buckets[position] = table.insert(
                scope, position: position, value: "token-\(position)", watchFrom: Double(position)
            ) { buckets[$0] = $1 }
        }
        return buckets
    }

    @Test func aRecordFillsOneCacheLineAndTheBucketsStartOnALineBoundary() {
        #expect(MemoryLayout<ScopeTable.Record>.stride == 64)
        let table = ScopeTable()
        for size in [1, 7, 100, 1000] {
            _ = fill(table, with: (0..<size).map { .vehicle("v-\(size)-\($0)") })
            #expect(UInt(bitPattern: table.record(at: 0)) % 64 == 0, "after \(size) inserts")
            table.removeAll()
        }
    }

    @Test func scopesOfEveryKindWithOneIDStayApartAndComeBackWhole() throws {
        let scopes: [AuthorizationScope] = [
            .vehicle("x"), .trip("x"), .tracking("x"), .task("x"), .vehicle("x", taskID: "t-1"), .vehicle("é-1"),
        ]
        let table = ScopeTable()
        let buckets = fill(table, with: scopes)
        for (position, scope) in scopes.enumerated() {
            let bucket = try #require(table.bucket(of: scope), "\(scope)")
            #expect(bucket == buckets[position])
            let record = table.record(at: bucket).pointee
            #expect(record.position == position)
            #expect(record.value == "token-\(position)")
            #expect(record.scope == scope)
            #expect(record.kind == scope.kind)
        }
        #expect(table.bucket(of: .trip("y")) == nil)
        #expect(Set(table.scopes) == Set(scopes))
    }

    @Test func everyMoveIsReportedThroughGrowthAndRemoval() {
        // Positions' buckets as the moves report them must always be where the table
        // finds each scope, with runs long enough to wrap and shift.
        let table = ScopeTable()
        let scopes = (0..<3000).map { AuthorizationScope.vehicle("v-\($0)") }
        var buckets = fill(table, with: scopes)
        var present = Set(0..<scopes.count)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let position = present.randomElement(using: &generator)!
            table.remove(at: buckets[position]!) { buckets[$0] = $1 }
            buckets[position] = nil
            present.remove(position)
        }
        #expect(table.count == present.count)
        for (position, scope) in scopes.enumerated() {
            #expect(table.bucket(of: scope) == buckets[position], "\(scope)")
        }
    }

    @Test func everyKindSurvivesItsOrdinal() {
        for kind in [AuthorizationScope.Kind.vehicle, .trip, .tracking, .task] {
            #expect(AuthorizationScope.Kind(ordinal: kind.ordinal) == kind)
            #expect(kind.ordinal < 4)
        }
    }
}
