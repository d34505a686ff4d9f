import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A thread's own copies of the tokens it keeps asking for, so that a hot vehicle's
/// lookups neither take its shard's lock nor write memory another thread reads.
///
/// Each thread that looks tokens up has one, reached through thread-local storage: a
/// small direct-mapped table of lines, each holding one engine's scope, its cached token
/// (after a few hits a copy in storage of the thread's own, so even handing it out counts
/// references on memory no other thread touches), and the version of the cache slot it
/// was copied from. A line serves while the slot's version is unchanged and the clock is
/// before the token's refresh window: exactly when the shard's own lookup would serve it
/// fresh and write nothing but a hit count. Any change to the slot (a new token, removal,
/// eviction, the eviction hand clearing its reference bit) bumps the version, and the
/// next lookup goes to the shard again.
///
/// A line is filled after a few shard hits in a row for the same scope on that line: two,
/// doubled for a line whose last fill was replaced before it served (``LineFillRule``), so
/// lookups spread over many scopes (which would replace lines before using them) soon pay
/// only the check, not a fill. Hits served here are counted in a per-thread, per-engine
/// word that only this thread writes and the engine's statistics add up.
final class ThreadTokenCache {
    /// One cached scope of one engine. The fields a lookup checks come first and are
    /// plain values; the references below them keep what they point at alive.
    struct Line {
        /// The engine's ``TokenEngine/id``; 0 for an empty line.
        var engineID: UInt64 = 0
        var scopeHash = 0
        /// When the shard's hits fill the line: beside the line's own scope, so that a
        /// lookup the line cannot serve reads one cache line here.
        var fillRule = LineFillRule()
        var kind = AuthorizationScope.Kind.vehicle
        var id = ""
        var taskID: String?
        /// The start of the token's refresh window (uptime on the engine's clock).
        var validUntil: TimeInterval = -.infinity
        /// The address of the slot's version word, and the value it had when the line was
        /// filled.
        var versionAddress: UnsafeMutablePointer<Int>?
        var expectedVersion = 0
        /// The address of this thread's hit count for the engine.
        var hitsAddress: UnsafeMutablePointer<Int>?
        /// Hits since the line was filled, up to the copy.
        var hitsSinceFill = 0
        /// The token: the shard's own at first, then, once the line has served
        /// ``ThreadTokenCache/hitsBeforeCopy`` times, a copy in storage of this thread's own.
        var token: AuthToken?
        /// The token's value, from the same storage as ``token``.
        var value = ""
        /// The words the addresses point into.
        var version: AtomicWord?
        var hits: AtomicWord?

        /// Whether the line holds the scope with hash `scopeHash` of engine `engineID`, by
        /// engine and hash (``ThreadTokenCache/serves(_:_:at:)`` checks the IDs).
        @inline(__always)
        func holds(engineID: UInt64, scopeHash: Int) -> Bool {
            self.engineID == engineID && self.scopeHash == scopeHash
        }
    }

    /// A thread's hit count for one engine, and whether the engine is still alive.
    private struct Counter {
        let hits: AtomicWord
        weak var engine: TokenEngine?
    }

    static var lineCount: Int { 128 }

    /// How often a line serves the shard's token before it copies it into storage of its
    /// own: a copy costs two allocations, worth it only for a scope this thread keeps
    /// asking for, whose reference counts would otherwise bounce between cores.
    static var hitsBeforeCopy: Int { 16 }

    /// The lines, at a fixed address: reached through a pointer, an access needs no
    /// dynamic exclusivity check (only this thread ever touches them).
    let lines: UnsafeMutablePointer<Line>
    /// This thread's hit counts, by engine.
    private var counters: [UInt64: Counter] = [:]

    private init() {
        lines = .allocate(capacity: Self.lineCount)
        lines.initialize(repeating: Line(), count: Self.lineCount)
    }

    deinit {
        lines.deinitialize(count: Self.lineCount)
        lines.deallocate()
    }

    // MARK: Thread-local storage

    /// The key under which each thread keeps its cache; the thread's exit releases it.
    /// Engines copy it when they are made, so a lookup reads no lazily made global.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        #if canImport(Darwin)
            let status = pthread_key_create(&key) { raw in Unmanaged<ThreadTokenCache>.fromOpaque(raw).release() }
        #else
            let status = pthread_key_create(&key) { raw in
                if let raw { Unmanaged<ThreadTokenCache>.fromOpaque(raw).release() }
            }
        #endif
        precondition(status == 0, "FleetAuth could not create its thread-local key (pthread_key_create: \(status))")
        return key
    }()

    /// The calling thread's lines, if it has made its cache.
    @inline(__always)
    static func currentLines(key: pthread_key_t) -> UnsafeMutablePointer<Line>? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<ThreadTokenCache>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.lines }
    }

    /// The calling thread's cache, made on first use.
    static func current(key: pthread_key_t) -> ThreadTokenCache {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<ThreadTokenCache>.fromOpaque(raw).takeUnretainedValue()
        }
        let cache = ThreadTokenCache()
        pthread_setspecific(key, Unmanaged.passRetained(cache).toOpaque())
        return cache
    }

    // MARK: Lookups

    @inline(__always)
    static func line(in lines: UnsafeMutablePointer<Line>, engineID: UInt64, scopeHash: Int)
        -> UnsafeMutablePointer<Line>
    {
        // Fibonacci hashing mixes the engine in, so two engines' hot scopes rarely share a line.
        let mixed = UInt64(bitPattern: Int64(scopeHash)) ^ (engineID &* 0x9E37_79B9_7F4A_7C15)
        return lines + Int(truncatingIfNeeded: mixed & UInt64(lineCount - 1))
    }

    /// `scope`'s line among `lines` if it holds `scope` of engine `engineID` (by engine
    /// and hash: ``serves(_:_:at:)`` checks the rest); `nil` otherwise.
    @inline(__always)
    static func line(
        in lines: UnsafeMutablePointer<Line>?, engineID: UInt64, holding scope: AuthorizationScope
    ) -> UnsafeMutablePointer<Line>? {
        guard let lines else { return nil }
        let line = line(in: lines, engineID: engineID, scopeHash: scope.hashCode)
        return line.pointee.holds(engineID: engineID, scopeHash: scope.hashCode) ? line : nil
    }

    /// Whether `line`, which holds `scope` by engine and hash, serves it at uptime `now`
    /// (the same kind and IDs, the slot unchanged, the token before its refresh window),
    /// counting the hit when it does.
    @inline(__always)
    static func serves(_ line: UnsafeMutablePointer<Line>, _ scope: AuthorizationScope, at now: TimeInterval) -> Bool {
        guard now < line.pointee.validUntil, let versionAddress = line.pointee.versionAddress,
            fleetauthLoadAcquire(versionAddress) == line.pointee.expectedVersion,
            line.pointee.kind == scope.kind, line.pointee.id == scope.id, line.pointee.taskID == scope.taskID
        else { return false }
        if let hitsAddress = line.pointee.hitsAddress { fleetauthIncrementBySoleWriter(hitsAddress) }
        if line.pointee.hitsSinceFill < hitsBeforeCopy {
            line.pointee.hitsSinceFill &+= 1
            if line.pointee.hitsSinceFill == hitsBeforeCopy, let token = line.pointee.token {
                let copy = token.withOwnStorage()
                line.pointee.token = copy
                line.pointee.value = copy.value
            }
        }
        return true
    }

    /// Whether a shard hit for `scope` should fill its line: the shard has now served
    /// `scope` on this line as many times in a row as the line's ``LineFillRule`` asks, or
    /// the line already holds `scope` (its copy went out of date).
    @inline(__always)
    static func wantsFill(in lines: UnsafeMutablePointer<Line>, engineID: UInt64, scope: AuthorizationScope) -> Bool {
        let line = line(in: lines, engineID: engineID, scopeHash: scope.hashCode)
        if line.pointee.fillRule.countShardHit(engineID: engineID, scopeHash: scope.hashCode) { return true }
        if line.pointee.holds(engineID: engineID, scopeHash: scope.hashCode) {
            // Out of date: drop the token now, so a secret the cache let go of does not stay
            // here until the line is reused.
            line.pointee.token = nil
            line.pointee.value = ""
            line.pointee.versionAddress = nil
            return true
        }
        return false
    }

    /// Fills `scope`'s line with the slot's token, served while `slot` keeps its version
    /// and the clock is before the slot's `validUntil`.
    func fill(engine: TokenEngine, scope: AuthorizationScope, slot: TokenCache.SlotVersion) {
        let token = slot.token
        let line = Self.line(in: lines, engineID: engine.id, scopeHash: scope.hashCode)
        let hits = hitCounter(for: engine)
        // A first fill, or a refill of the same scope, owes nothing to the one before.
        let firstOrRefill =
            line.pointee.engineID == 0 || line.pointee.holds(engineID: engine.id, scopeHash: scope.hashCode)
        let fillRule = line.pointee.fillRule.afterFill(servedHits: firstOrRefill ? .max : line.pointee.hitsSinceFill)
        line.pointee = Line(
            engineID: engine.id, scopeHash: scope.hashCode, fillRule: fillRule, kind: scope.kind, id: scope.id,
            taskID: scope.taskID,
            validUntil: slot.validUntil, versionAddress: slot.word.address, expectedVersion: slot.value,
            hitsAddress: hits.address, token: token, value: token.value, version: slot.word, hits: hits)
    }

    /// This thread's hit counter for `engine`, made and registered with the engine on first
    /// use. Counters of engines that are gone are dropped once a few have built up.
    private func hitCounter(for engine: TokenEngine) -> AtomicWord {
        if let counter = counters[engine.id] { return counter.hits }
        if counters.count >= 16 { counters = counters.filter { $0.value.engine != nil } }
        let hits = AtomicWord()
        counters[engine.id] = Counter(hits: hits, engine: engine)
        engine.threadHits.withLock { $0.append(hits) }
        return hits
    }
}
