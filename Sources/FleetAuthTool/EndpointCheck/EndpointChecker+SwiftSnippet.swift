package import FleetAuthCore
import Foundation

/// The app's provider, in Swift, configured as the check was: what a user pastes once the
/// endpoint passes. It shows no credential: a header value that may hold one, and a query
/// value other than an ID, become editor placeholders (`<#credential#>`) that do not
/// compile until they are filled in.
extension EndpointChecker {
    /// The statement that makes the app's provider for this endpoint: its `TokenEndpoint`
    /// (URL, method, `format`, headers, `allowsInsecureHTTP`) and, when not the default,
    /// its `TokenRules` (audience, wildcard, `fleet`).
    func swiftSnippet(format: TokenResponseFormat, fleet: FleetFlavor) -> String {
        let provider = options.scope.kind == .vehicle ? "DriverTokenProvider" : "ConsumerTokenProvider"
        var endpoint = ["url: \(Self.swiftURL(options.url, scope: options.scope))"]
        if options.method != "GET" { endpoint.append("method: \(Self.literal(options.method))") }
        endpoint.append("format: \(format.spelling.swift)")
        if !options.headers.isEmpty {
            let entries = options.headers.sorted { $0.key < $1.key }.map { name, value in
                "\(Self.literal(name)): \(Self.swiftHeaderValue(named: name, value))"
            }
            endpoint.append("headers: { _ in [\(entries.joined(separator: ", "))] }")
        }
        if options.allowsInsecureHTTP { endpoint.append("allowsInsecureHTTP: true") }
        var rules: [String] = []
        if options.audience != TokenRules.fleetServiceAudience {
            rules.append("expectedAudience: \(options.audience.map(Self.literal) ?? "nil")")
        }
        if options.allowWildcard { rules.append("allowsWildcard: true") }
        if fleet != .onDemand { rules.append("fleet: \(Self.swift(fleet))") }
        var lines = ["let provider = try \(provider)(", "    endpoint: TokenEndpoint("]
        lines += endpoint.enumerated().map { "        \($1)\($0 < endpoint.count - 1 ? "," : "")" }
        lines += ["    ),", "    transport: URLSessionTransport()\(rules.isEmpty ? "" : ",")"]
        if !rules.isEmpty { lines.append("    rules: TokenRules(\(rules.joined(separator: ", ")))") }
        lines.append(")")
        return lines.joined(separator: "\n")
    }

    /// `template` as a Swift string literal, without user info, and with the value of each
    /// query item other than an ID, which may be a key, as a placeholder.
    package static func swiftURL(_ template: String, scope: AuthorizationScope) -> String {
        var text = template.replacingOccurrences(
            of: "^([A-Za-z][A-Za-z0-9+.-]*://)[^/@?#]*@", with: "$1", options: .regularExpression)
        var query: [String] = []
        if let mark = text.firstIndex(of: "?") {
            query = text[text.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map {
                String($0)
            }
            text = String(text[..<mark])
        }
        let ids = [scope.kind.queryItemName, "taskId"]
        let items = query.map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return escaped(item) }
            let name = String(item[..<equals])
            let value = item[item.index(after: equals)...]
            let shown = ids.contains(name) || value.isEmpty || (value.hasPrefix("{") && value.hasSuffix("}"))
            return "\(escaped(name))=\(shown ? escaped(String(value)) : "\\(<#value#>)")"
        }
        return "\"\(escaped(text))\(items.isEmpty ? "" : "?" + items.joined(separator: "&"))\""
    }

    /// A header's value in Swift: itself, or, when it may hold a credential, a placeholder
    /// after its scheme (`"Bearer \(<#credential#>)"`).
    static func swiftHeaderValue(named name: String, _ value: String) -> String {
        guard CredentialHeader.mayHoldCredential(named: name, value: value) else { return literal(value) }
        guard let scheme = CredentialHeader.scheme(of: value) else { return "<#credential#>" }
        return "\"\(escaped(scheme)) \\(<#credential#>)\""
    }

    /// `text` as a Swift string literal.
    static func literal(_ text: String) -> String { "\"\(escaped(text))\"" }

    /// `text` escaped for the inside of a Swift string literal.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
    }
}
