public import Foundation

/// The operator's token backend: where to ask, how to name the vehicle or trip, which
/// credentials to send and how to read the answer.
///
/// The platform's sample backend, `GET /token/driver/{vehicleId}` answering
/// `{"jwt", "creationTimestamp", "expirationTimestamp"}`:
///
/// <!-- snippet setup:
/// struct AppSession: Sendable { func appCredential() async throws -> String { "app-credential" } }
/// let session = AppSession()
/// -->
/// ```swift
/// let endpoint = TokenEndpoint(
///     url: "https://api.example.com/token/driver/{vehicleId}",
///     format: .jwtWithExpirationTimestamp,
///     headers: { _ in ["Authorization": "Bearer \(try await session.appCredential())"] }
/// )
/// ```
public struct TokenEndpoint: Sendable {
    /// The backend's URL, with an optional placeholder for the ID (see
    /// ``init(url:method:idQueryName:taskQueryName:format:headers:timeout:maximumResponseBytes:allowsInsecureHTTP:)``).
    public var url: String
    /// The HTTP method, `GET` (the default) or `POST`; stored upper-cased, whatever case it
    /// was set in.
    public var method: String {
        didSet { method = method.uppercased() }
    }
    /// The query item that carries the ID when the URL has no placeholder; `nil` (the
    /// default) names it after the context's kind: `vehicleId`, `tripId` or `trackingId`.
    public var idQueryName: String?
    /// The query item that carries a task's ID when the URL has no placeholder. Default
    /// `taskId`.
    public var taskQueryName: String
    /// The shape of the backend's answer. Default ``TokenResponseFormat/tokenOnly``.
    public var format: TokenResponseFormat
    /// The extra headers of each fetch (usually the app's own login credential), called for
    /// every fetch; if it throws, or has not returned when ``timeout`` runs out, the fetch
    /// fails with `credentialsUnavailable` and nothing is sent.
    ///
    /// Give the credential here, per request: `Authorization` is among the headers Apple's
    /// URLSession reserves, which it may ignore in a session configuration's
    /// `httpAdditionalHeaders` but sends when a request sets it. A header named here replaces
    /// FleetAuth's of the same name, whatever the case of either (`Accept`, and `Content-Type`
    /// with `POST`).
    public var headers: @Sendable (AuthorizationScope) async throws -> [String: String]
    /// Seconds one request may take, the `headers` closure included. Default 15.
    public var timeout: TimeInterval
    /// The largest answer accepted, in bytes. Default 64 KiB.
    public var maximumResponseBytes: Int
    /// Whether plain `http` to hosts other than loopback is allowed, which sends the token
    /// and the app's credential in clear text: for trusted test networks only. Default `false`.
    /// On Apple platforms App Transport Security refuses such a request as well, unless the
    /// app's `Info.plist` has an exception for the host (`NSAppTransportSecurity`).
    public var allowsInsecureHTTP: Bool

    /// Creates an endpoint description.
    ///
    /// `url` may name the ID in its path with a placeholder, `{id}`, `{vehicleId}`,
    /// `{deliveryVehicleId}`, `{tripId}`, `{trackingId}` or `{taskId}` (any capitalisation of
    /// `Id`), filled with each request's percent-encoded ID. Otherwise the ID is sent as the
    /// query item `idQueryName` (by default `vehicleId`, `tripId` or `trackingId`, after the
    /// context's kind) and a task's as `taskQueryName`. A `POST` also sends them as a JSON body.
    /// `headers` (usually the app's own login credential) is called for every fetch; if it
    /// throws, the fetch fails with `credentialsUnavailable`. `timeout` is per request, the
    /// `headers` closure included.
    /// `allowsInsecureHTTP` permits plain `http` to hosts other than loopback, which would send
    /// the token and the app's credential in clear text: for trusted test networks only.
    ///
    /// Nothing is checked here: a provider checks the endpoint when it is made.
    public init(
        url: String,
        method: String = "GET",
        idQueryName: String? = nil,
        taskQueryName: String = "taskId",
        format: TokenResponseFormat = .tokenOnly,
        headers: @escaping @Sendable (AuthorizationScope) async throws -> [String: String] = { _ in [:] },
        timeout: TimeInterval = 15,
        maximumResponseBytes: Int = 64 * 1024,
        allowsInsecureHTTP: Bool = false
    ) {
        self.url = url
        self.method = method.uppercased()
        self.idQueryName = idQueryName
        self.taskQueryName = taskQueryName
        self.format = format
        self.headers = headers
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// Throws `invalidConfiguration` (the message says why) for a URL a request could not use:
    /// not absolute http(s), a placeholder unknown or that none of `kinds` fills (empty: any),
    /// or plain `http` to a remote host without the opt-in. Providers call it when made.
    package func validate(for kinds: [AuthorizationScope.Kind] = []) throws(FleetAuthError) {
        guard method == "GET" || method == "POST" else {
            throw FleetAuthError(
                reason: .invalidConfiguration,
                message: "The token endpoint's method is `\(method)`; use `GET` (the default) or `POST`.")
        }
        let template = try URLTemplate(url, forAnyOf: kinds)
        try template.check(forAnyOf: kinds)
        _ = try checkedComponents(template.sample, scope: nil)
        guard timeout > 0, timeout.isFinite else {
            throw FleetAuthError(
                reason: .invalidConfiguration,
                message: "The token endpoint's timeout must be a positive number of seconds.")
        }
        guard maximumResponseBytes > 0 else {
            throw FleetAuthError(
                reason: .invalidConfiguration, message: "The token endpoint's maximumResponseBytes must be positive.")
        }
    }

    /// Whether a task context's request differs from its vehicle's: the URL has `{taskId}`,
    /// the ID goes in a query item (the task's follows), or a `POST` body carries it. When it
    /// does not, the backend mints a task the vehicle's token. An unusable URL counts as
    /// naming the task, so nothing is shared on its account.
    package var requestNamesTask: Bool {
        guard method == "GET", let template = try? URLTemplate(url) else { return true }
        return !template.namesTheID || template.placeholders.contains { $0.meaning == .taskID }
    }

    /// Whether the backend is reached over cleartext HTTP (loopback, or allowed insecure),
    /// where a connection carries one request at a time: HTTP/2, which carries many on one
    /// connection, comes over TLS.
    package var isCleartextHTTP: Bool {
        guard let template = try? URLTemplate(url) else { return false }
        return URLComponents(string: template.sample)?.scheme?.lowercased() == "http"
    }

    /// The request for `scope`, without the extra headers; throws `invalidConfiguration`
    /// or `insecureEndpoint` when the URL cannot be used. Not inlined: the async
    /// ``request(for:)`` would keep its values in its frame.
    @inline(never)
    package func baseRequest(for scope: AuthorizationScope) throws(FleetAuthError) -> TransportRequest {
        let url = try resolvedURL(for: scope)
        var request = TransportRequest(method: method, url: url, timeout: timeout)
        request.asksForToken = true
        request.headers["Accept"] = "application/json, application/jwt, text/plain"
        if method != "GET" {
            var body: [String: String] = [scope.kind.queryItemName: scope.id]
            if let taskID = scope.taskID { body["taskId"] = taskID }
            request.body = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
            request.headers["Content-Type"] = "application/json"
        }
        return request
    }

    /// The complete request for `scope`, with the app's headers.
    ///
    /// Its synchronous steps are functions of their own, not inlined: this function's async
    /// frame would hold every value of theirs, and a fleet started together builds every
    /// vehicle's request at once (880 bytes with them inlined, 576 without).
    package func request(for scope: AuthorizationScope) async throws(FleetAuthError) -> TransportRequest {
        let request = try baseRequest(for: scope)
        let extra: [String: String]
        do {
            extra = try await headers(scope)
        } catch {
            throw Self.headerProviderFailure(error, for: scope, url: request.url)
        }
        return Self.request(request, withAppHeaders: extra)
    }

    /// The error of a `headers` closure that threw `error` (cancelled, or the app's own).
    @inline(never)
    private static func headerProviderFailure(_ error: any Error, for scope: AuthorizationScope, url: URL)
        -> FleetAuthError
    {
        if error is CancellationError {
            return FleetAuthError(
                reason: .credentialsUnavailable, message: "Cancelled while the header provider ran.", scope: scope,
                underlyingError: CancellationError())
        }
        return FleetAuthError(
            reason: .credentialsUnavailable,
            message:
                "The header provider threw, so no credential could be sent; make sure the user is signed in to the app.",
            scope: scope, url: url, underlyingError: error)
    }

    /// `request` with the app's headers: the app's header replaces FleetAuth's of the same
    /// name, whatever the case of either; two of the app's own that differ only in case both
    /// stay, for the transport to refuse.
    @inline(never)
    private static func request(_ request: TransportRequest, withAppHeaders extra: [String: String])
        -> TransportRequest
    {
        var request = request
        let replaced = request.headers.keys.filter { own in extra.keys.contains { HeaderLookup.sameName($0, own) } }
        for name in replaced { request.headers[name] = nil }
        request.headers.merge(extra) { _, app in app }
        return request
    }

    private func resolvedURL(for scope: AuthorizationScope) throws(FleetAuthError) -> URL {
        let template: URLTemplate
        let text: String
        do throws(FleetAuthError) {
            template = try URLTemplate(url)
            text = try template.resolved(for: scope)
        } catch {
            throw error.adding(scope: scope, url: nil)
        }
        var components = try checkedComponents(text, scope: scope)
        if !template.namesTheID {
            var items = components.queryItems ?? []
            items.append(URLQueryItem(name: idQueryName ?? scope.kind.queryItemName, value: scope.id))
            if let taskID = scope.taskID { items.append(URLQueryItem(name: taskQueryName, value: taskID)) }
            components.queryItems = items
            // `+` is legal in a query but many servers read it as a space.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        }
        guard let resolved = components.url else {
            throw configurationError("The token URL could not be built for this ID.", scope)
        }
        return resolved
    }

    /// The parts of `text` once it is known to be an absolute http(s) URL that may be used.
    private func checkedComponents(_ text: String, scope: AuthorizationScope?) throws(FleetAuthError)
        -> URLComponents
    {
        let notAbsolute = "The token URL is not an absolute http(s) URL; write it as https://host/path."
        guard let components = URLComponents(string: text) else { throw configurationError(notAbsolute, scope) }
        switch TokenCarryingURL.judge(
            scheme: components.scheme, host: components.host, allowsInsecureHTTP: allowsInsecureHTTP)
        {
        case .allowed: break
        case .notAbsolute: throw configurationError(notAbsolute, scope)
        case .unsupportedScheme(let scheme):
            throw configurationError(
                "The token URL's scheme `\(scheme)` is not http or https; the token backend must be an https URL.",
                scope)
        case .clearText(let host):
            throw FleetAuthError(
                reason: .insecureEndpoint,
                message:
                    "Plain http to \(host) would send the token and the app's credential in clear text; use https, or set allowsInsecureHTTP for a trusted test network.",
                scope: scope)
        }
        return components
    }

    private func configurationError(_ message: String, _ scope: AuthorizationScope?) -> FleetAuthError {
        FleetAuthError(reason: .invalidConfiguration, message: message, scope: scope)
    }
}

/// What `print`, `dump` and mirrors show of an endpoint: its URL without user info, fragment
/// or query values (a token URL may carry an API key), and no header (the closure's values
/// are the app's credential).
extension TokenEndpoint: CustomStringConvertible, CustomReflectable {
    /// `TokenEndpoint(GET https://api.example.com/token/{vehicleId}?key=hidden)`.
    public var description: String { "TokenEndpoint(\(method) \(FleetAuthError.redacted(url)))" }

    /// The redacted URL, the method, the query names, the format and the limits.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": FleetAuthError.redacted(url), "method": method, "idQueryName": idQueryName as Any,
                "taskQueryName": taskQueryName, "format": format, "timeout": timeout,
                "maximumResponseBytes": maximumResponseBytes, "allowsInsecureHTTP": allowsInsecureHTTP,
            ], displayStyle: .struct)
    }
}
