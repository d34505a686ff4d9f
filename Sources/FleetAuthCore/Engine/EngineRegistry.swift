import Foundation

/// Which engines alive in this process serve which scope from where: the same token
/// endpoint URL on the same clock (every real clock is one; a manual clock is a world of its
/// own). It lets an engine see, as it starts a fetch, whether another provider already serves
/// that scope from that endpoint: two providers each fetch and cache their own token, so the
/// backend mints one per provider.
///
/// Each engine records only the first ``scopesPerEngine`` scopes it fetches (the duplicates
/// apps make, a reporter and an adapter each given a provider of their own, show at the first
/// fetch), so the registry stays small and a check costs a dictionary lookup, however many
/// engines and scopes there are.
final class EngineRegistry: Sendable {
    /// Engines on one clock asking one token endpoint URL. `dump` and mirrors show the URL
    /// as messages do, without its query values: the group is stored in every engine.
    struct Group: Hashable, Sendable, CustomReflectable {
        /// The manual clock's identity; `nil` for the real one.
        let clock: ObjectIdentifier?
        /// The endpoint's URL, as configured.
        let url: String

        var customMirror: Mirror {
            Mirror(
                self, children: ["clock": clock.map { "\($0)" } ?? "real", "url": FleetAuthError.redacted(url)],
                displayStyle: .struct)
        }
    }

    /// A scope served from a group's endpoint.
    private struct Key: Hashable {
        let group: Group
        let scope: AuthorizationScope
    }

    /// How many scopes each engine records.
    static let scopesPerEngine = 64

    /// The registry of this process.
    static let shared = EngineRegistry()

    /// An engine, held weakly: the registry must not keep a provider alive.
    private struct Member: Sendable {
        weak var engine: TokenEngine?
    }

    private let servers = LockedState<[Key: [ObjectIdentifier: Member]]>([:])

    /// The group an engine of `configuration` belongs to.
    static func group(of configuration: TokenProviderConfiguration) -> Group {
        Group(
            clock: (configuration.clock as? any SimulatedClock).map { ObjectIdentifier($0 as AnyObject) },
            url: serverForm(of: configuration.endpoint.url))
    }

    /// `url` as the server tells endpoints apart: the scheme and host in lower case, without
    /// the scheme's default port (`HTTPS://Backend.example.com:443/token` is
    /// `https://backend.example.com/token`); the path and query as written.
    static func serverForm(of url: String) -> String {
        guard let schemeEnd = url.range(of: "://")?.lowerBound else { return url }
        let scheme = url[..<schemeEnd].lowercased()
        let path = URLTemplate.pathStart(of: url)
        var authority = url[URLTemplate.authorityStart(of: url)..<path].lowercased()
        if let port = ["https": ":443", "http": ":80"][scheme], authority.hasSuffix(port) {
            authority.removeLast(port.count)
        }
        return "\(scheme)://\(authority)\(url[path...])"
    }

    /// Records that `engine` of `group` serves `scope`; returns the engines alive that serve
    /// it from there, this one included.
    func add(_ engine: TokenEngine, serving scope: AuthorizationScope, in group: Group) -> [TokenEngine] {
        servers.withLock { servers in
            let key = Key(group: group, scope: scope)
            servers[key, default: [:]][ObjectIdentifier(engine)] = Member(engine: engine)
            return servers[key]?.values.compactMap(\.engine) ?? []
        }
    }

    /// Forgets engine `id` of `group`, which served `scopes` (called as it goes away).
    func remove(_ id: ObjectIdentifier, serving scopes: [AuthorizationScope], in group: Group) {
        servers.withLock { servers in
            for scope in scopes {
                let key = Key(group: group, scope: scope)
                servers[key]?[id] = nil
                if servers[key]?.isEmpty == true { servers[key] = nil }
            }
        }
    }
}
