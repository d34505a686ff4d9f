/// When a thread fills one of its lines (``ThreadTokenCache``) with a scope the shard has
/// just served: after a few shard hits in a row for that scope on the line, as many as the
/// line's last fill earned.
///
/// A line starts by asking for two hits in a row. When a fill is replaced having served
/// fewer than ``earnedHits`` hits, it did not pay for itself (a fill costs a few hundred
/// instructions and reference counts; a line hit saves about a lock and a probe), so the
/// next fill of that line asks for twice as many, up to ``mostHitsToFill``; a fill that
/// earned its hits sets it back to two. A thread that keeps asking for a few scopes fills
/// its lines on the second lookup, as before; one spread over more scopes than its lines
/// hold (a fleet simulator walking 1,000 vehicles) soon stops filling lines that another
/// scope would take before they serve.
package struct LineFillRule {
    /// The hits in a row a fresh line asks for.
    package static let fewestHitsToFill: UInt8 = 2
    /// The most hits in a row a line asks for.
    package static let mostHitsToFill: UInt8 = 64
    /// The hits a fill must serve before it is replaced to count as worth it.
    package static let earnedHits = 2

    /// The scope the shard last served on this line without a fill, by engine and hash.
    private var candidateEngineID: UInt64 = 0
    private var candidateHash = 0
    /// Shard hits in a row for the candidate.
    private var streak: UInt8 = 0
    /// The shard hits in a row the candidate needs to fill the line.
    package private(set) var hitsToFill = fewestHitsToFill

    /// A line's rule before its first fill.
    package init() {}

    /// Counts a shard hit on the line for the scope with `scopeHash` of engine `engineID`;
    /// whether the scope has now had the hits in a row a fill needs.
    @inline(__always)
    package mutating func countShardHit(engineID: UInt64, scopeHash: Int) -> Bool {
        if candidateEngineID == engineID, candidateHash == scopeHash {
            if streak < .max { streak &+= 1 }
        } else {
            candidateEngineID = engineID
            candidateHash = scopeHash
            streak = 1
        }
        return streak >= hitsToFill
    }

    /// The rule for the line's next fill, now that it is filled again and its last fill
    /// served `servedHits` hits (a first fill, or a refill of the same scope, counts as
    /// earned).
    package func afterFill(servedHits: Int) -> LineFillRule {
        var next = LineFillRule()
        if servedHits < Self.earnedHits {
            next.hitsToFill = hitsToFill >= Self.mostHitsToFill / 2 ? Self.mostHitsToFill : hitsToFill * 2
        }
        return next
    }
}
