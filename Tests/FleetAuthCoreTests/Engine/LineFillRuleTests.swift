import FleetAuthCore
import Testing

/// When a thread line fills: on the second shard hit in a row while fills pay, after more
/// once they are replaced before they serve.
@Suite("Line fills: two hits in a row, more for a line whose fills do not serve")
struct LineFillRuleTests {
    /// Shard hits for `hashes` in turn on one line (engine 1); whether each wanted a fill.
    func hits(_ rule: inout LineFillRule, _ hashes: [Int]) -> [Bool] {
        hashes.map { rule.countShardHit(engineID: 1, scopeHash: $0) }
    }

    @Test func aFreshLineFillsOnTheSecondHitInARowForOneScope() {
        var rule = LineFillRule()
        #expect(rule.hitsToFill == 2)
        #expect(hits(&rule, [7, 7]) == [false, true])
        // Another scope in between starts the count again.
        var interrupted = LineFillRule()
        #expect(hits(&interrupted, [7, 8, 7, 7]) == [false, false, false, true])
        // The same hash of another engine is another scope.
        var twoEngines = LineFillRule()
        let firstEngine = twoEngines.countShardHit(engineID: 1, scopeHash: 7)
        let secondEngine = twoEngines.countShardHit(engineID: 2, scopeHash: 7)
        #expect(!firstEngine && !secondEngine)
    }

    @Test func aFillReplacedBeforeItServedDoublesTheHitsTheNextNeedsUpTo64() {
        var rule = LineFillRule()
        var asked: [UInt8] = []
        for _ in 0..<7 {
            rule = rule.afterFill(servedHits: LineFillRule.earnedHits - 1)
            asked.append(rule.hitsToFill)
        }
        #expect(asked == [4, 8, 16, 32, 64, 64, 64])
        #expect(hits(&rule, Array(repeating: 7, count: 64)) == Array(repeating: false, count: 63) + [true])
    }

    @Test func aFillThatServedSetsTheLineBackToTwo() {
        let backedOff = LineFillRule().afterFill(servedHits: 0).afterFill(servedHits: 0)
        #expect(backedOff.hitsToFill == 8)
        #expect(backedOff.afterFill(servedHits: LineFillRule.earnedHits).hitsToFill == 2)
        #expect(backedOff.afterFill(servedHits: .max).hitsToFill == 2)
        // A new fill forgets the old candidate: the next scope counts from one.
        var next = backedOff.afterFill(servedHits: 16)
        #expect(hits(&next, [9, 9]) == [false, true])
    }
}
