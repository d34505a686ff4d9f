import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an engineer would write instead of FleetAuth's lookup, each as lean as it can be
/// while still correct: a token per key, expiry checked against a boot-time clock on every
/// lookup. FleetAuth's cost is judged against these, in the same run.
public enum Peers {
    /// A cached token and its expiry on the boot-time clock.
    public struct Entry: Sendable {
        /// The token's value.
        public let token: String
        /// When it expires, in ``Peers/bootTime()`` seconds.
        public let expiresAt: Double
        /// Creates an entry.
        public init(token: String, expiresAt: Double) {
            self.token = token
            self.expiresAt = expiresAt
        }
    }

    /// Seconds since boot, sleep included: the clock a correct expiry check reads.
    @inline(__always)
    public static func bootTime() -> Double {
        var spec = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_BOOTTIME, &spec)
        #else
            clock_gettime(CLOCK_MONOTONIC, &spec)
        #endif
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// The correct floor: a mutex around a `[String: Entry]`, a clock read and a compare.
    public final class Floor: Sendable {
        private let table: Mutex<[String: Entry]>
        /// Creates the table.
        public init(_ entries: [String: Entry]) { table = Mutex(entries) }

        /// The unexpired token for `key`, if any.
        public func token(for key: String) -> String? {
            let now = bootTime()
            return table.withLock { table in
                guard let entry = table[key], entry.expiresAt > now else { return nil }
                return entry.token
            }
        }
    }

    /// An immutable table published through an atomic pointer: readers take no lock and
    /// write nothing shared but the reference count of the token they return. Replaced
    /// tables are kept for the process's life (a benchmark's shortcut; a real one needs
    /// safe reclamation).
    public final class Snapshot: Sendable {
        final class Table: Sendable {
            let entries: [String: Entry]
            init(_ entries: [String: Entry]) { self.entries = entries }
        }
        private let current: Atomic<Unmanaged<Table>>
        /// Publishes the first table.
        public init(_ entries: [String: Entry]) { current = Atomic(Unmanaged.passRetained(Table(entries))) }

        /// The unexpired token for `key`, if any.
        public func token(for key: String) -> String? {
            let now = bootTime()
            let table = current.load(ordering: .acquiring)
            return table._withUnsafeGuaranteedRef { table in
                guard let entry = table.entries[key], entry.expiresAt > now else { return nil }
                return entry.token
            }
        }
    }

    /// The common iOS pattern: an actor around a dictionary.
    public actor ActorCache {
        private let entries: [String: Entry]
        /// Creates the cache.
        public init(_ entries: [String: Entry]) { self.entries = entries }

        /// The unexpired token for `key`, if any.
        public func token(for key: String) -> String? {
            let now = bootTime()
            guard let entry = entries[key], entry.expiresAt > now else { return nil }
            return entry.token
        }
    }
}
