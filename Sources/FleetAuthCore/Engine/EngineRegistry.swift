import Foundation

/// The engines alive in this process, grouped by where they fetch from: the same token
/// endpoint URL on the same clock (every real clock is one; a manual clock is a world of its
/// own). It lets an engine see, when it starts a fetch, whether another provider already
/// serves that scope from that endpoint: two providers each fetch and cache their own token,
/// so the backend mints one per provider.
final class EngineRegistry: Sendable {
    /// A reference that does not keep its engine alive.
    private struct Member: Sendable {
        weak var engine: TokenEngine?
    }

    /// The registry of this process.
    static let shared = EngineRegistry()

    private let groups = LockedState<[String: [ObjectIdentifier: Member]]>([:])

    /// The group an engine of `configuration` belongs to.
    static func group(of configuration: TokenProviderConfiguration) -> String {
        let clock = (configuration.clock as? any SimulatedClock).map { "\(ObjectIdentifier($0 as AnyObject))" }
        return "\(clock ?? "real") \(configuration.endpoint.url)"
    }

    /// Adds `engine` to `group`.
    func add(_ engine: TokenEngine, to group: String) {
        groups.withLock { $0[group, default: [:]][ObjectIdentifier(engine)] = Member(engine: engine) }
    }

    /// Removes the engine `id` from `group` (called as it goes away).
    func remove(_ id: ObjectIdentifier, from group: String) {
        groups.withLock { groups in
            groups[group]?[id] = nil
            if groups[group]?.isEmpty == true { groups[group] = nil }
        }
    }

    /// The other engines alive in `engine`'s group; none for the one provider of an app.
    func others(of engine: TokenEngine, in group: String) -> [TokenEngine] {
        groups.withLock { groups in
            guard let members = groups[group], members.count > 1 else { return [] }
            return members.values.compactMap { $0.engine }.filter { $0 !== engine }
        }
    }
}
