import Foundation

/// A token URL that names the ID in its path, `https://api.example.com/token/driver/{vehicleId}`,
/// with the placeholders ``TokenEndpoint``'s initializer lists (the `Id` suffix in any
/// capitalisation), each ID percent-encoded. The SDK and `fleetauth check-endpoint` resolve
/// templates here.
package struct URLTemplate: Sendable {
    /// What a placeholder stands for.
    package enum Placeholder: Sendable, Hashable {
        /// The context's ID, whatever its kind.
        case id
        /// The context's ID, only for a context of this kind.
        case idOfKind(AuthorizationScope.Kind)
        /// The delivery task ID: the context's task, or the ID of a task context.
        case taskID
    }

    package let text: String
    /// The placeholders in order of appearance, with their spelling in the template.
    package let placeholders: [(spelling: String, meaning: Placeholder)]

    /// Parses `text`; `nil` placeholders means it holds none. Throws `invalidConfiguration`
    /// for an unknown placeholder (naming those a context of one of `kinds` fills; empty:
    /// any), a placeholder before the path (an ID would choose the host the credential goes
    /// to), or an unbalanced brace.
    package init(_ text: String, forAnyOf kinds: [AuthorizationScope.Kind] = []) throws(FleetAuthError) {
        self.text = text
        var found: [(String, Placeholder)] = []
        var rest = text[...]
        let pathStart = Self.pathStart(of: text)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw Self.error("The token URL has a `{` without its `}`.")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard open >= pathStart else {
                throw Self.error(
                    "The token URL's placeholder `{\(name)}` stands before its path, where an ID would choose the host the app's credential is sent to; placeholders may stand only in the path and the query. Name the host in full."
                )
            }
            guard let meaning = Self.meaning(of: name) else {
                throw Self.error(
                    "The token URL's placeholder `{\(name)}` is not one FleetAuth fills; use \(Self.placeholderList(for: kinds))."
                )
            }
            found.append((name, meaning))
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("}") { throw Self.error("The token URL has a `}` without its `{`.") }
        placeholders = found
    }

    /// The kinds of ID the template's placeholders name by kind (`{tripId}`: trip), in order.
    package var namedKinds: [AuthorizationScope.Kind] {
        placeholders.compactMap { if case .idOfKind(let kind) = $0.meaning { kind } else { nil } }
    }

    /// Whether the template names the context's ID, so no query item is needed.
    package var namesTheID: Bool {
        placeholders.contains { $0.meaning != .taskID }
    }

    /// Throws `invalidConfiguration` when a placeholder names an ID of a kind none of
    /// `kinds` is (empty: any kind).
    package func check(forAnyOf kinds: [AuthorizationScope.Kind]) throws(FleetAuthError) {
        guard !kinds.isEmpty else { return }
        for (spelling, meaning) in placeholders {
            switch meaning {
            case .idOfKind(let wanted) where !kinds.contains(wanted):
                let asked = kinds.map { "\($0)" }.joined(separator: ", ")
                throw Self.error(
                    "The token URL's placeholder `{\(spelling)}` names a \(wanted) ID, but this provider asks for \(asked) tokens; use \(Self.placeholderList(for: kinds))."
                )
            default: continue
            }
        }
    }

    /// The template with every placeholder replaced by a sample ID: the URL's form, to
    /// check before any request.
    package var sample: String {
        placeholders.reduce(text) { $0.replacingOccurrences(of: "{\($1.spelling)}", with: "id") }
    }

    /// The URL text for `scope`, every placeholder replaced by its percent-encoded ID.
    package func resolved(for scope: AuthorizationScope) throws(FleetAuthError) -> String {
        try check(forAnyOf: [scope.kind])
        var result = text
        for (spelling, meaning) in placeholders {
            let value: String
            switch meaning {
            case .id, .idOfKind: value = scope.id
            case .taskID:
                guard let taskID = scope.kind == .task ? scope.id : scope.taskID else {
                    throw FleetAuthError(
                        reason: .invalidContext,
                        message: "The token URL needs a task ID (`{\(spelling)}`), and this context has none.",
                        scope: scope)
                }
                value = taskID
            }
            result = result.replacingOccurrences(of: "{\(spelling)}", with: Self.pathEncoded(value))
        }
        return result
    }

    /// The placeholders that a context of one of `kinds` fills (empty: every kind), as a
    /// user writes them: `{id}, {vehicleId}, {deliveryVehicleId} or {taskId}`.
    package static func placeholderList(for kinds: [AuthorizationScope.Kind]) -> String {
        let all: [(String, AuthorizationScope.Kind?)] = [
            ("{id}", nil), ("{vehicleId}", .vehicle), ("{deliveryVehicleId}", .vehicle), ("{tripId}", .trip),
            ("{trackingId}", .tracking), ("{taskId}", .task),
        ]
        var names: [String] = []
        for (name, kind) in all where kinds.isEmpty || (kind.map(kinds.contains) ?? true) {
            if !names.contains(name) { names.append(name) }
        }
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "{id}")
    }

    /// Where the authority of `text` (user info, host and port) begins: after its scheme's
    /// `://`, or at its start.
    package static func authorityStart(of text: String) -> String.Index {
        text.range(of: "://")?.upperBound ?? text.startIndex
    }

    /// Where the path of `text` begins: after its authority, at the first `/`, `?` or `#`;
    /// the end when it has none.
    package static func pathStart(of text: String) -> String.Index {
        text[authorityStart(of: text)...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
    }

    /// Every placeholder name FleetAuth knows, lowercased.
    private static func meaning(of name: String) -> Placeholder? {
        switch name.lowercased() {
        case "id": .id
        case "vehicleid", "deliveryvehicleid": .idOfKind(.vehicle)
        case "tripid": .idOfKind(.trip)
        case "taskid": .taskID
        case "trackingid": .idOfKind(.tracking)
        default: nil
        }
    }

    /// `id` percent-encoded as one path segment (no `/ ? # ;` left to split it), as every
    /// URL FleetAuth builds from an ID needs it.
    package static func pathEncoded(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: idAllowed) ?? id
    }

    /// What a path segment may carry unencoded, made once: each copy is an 8 KB table, and
    /// every token request resolves its URL.
    private static let idAllowed: CharacterSet = {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#;{}")
        return allowed
    }()

    private static func error(_ message: String) -> FleetAuthError {
        FleetAuthError(reason: .invalidConfiguration, message: message)
    }
}
