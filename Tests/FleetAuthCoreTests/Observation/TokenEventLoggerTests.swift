import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

@Suite("Token event logger: levels, lines and redaction", .timeLimit(.minutes(10)))
struct TokenEventLoggerTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    /// Collects what a logger writes, from any thread.
    final class Lines: Sendable {
        private let state = LockedState<[(TokenEventLevel, String)]>([])
        func add(_ level: TokenEventLevel, _ line: String) { state.withLock { $0.append((level, line)) } }
        var all: [(TokenEventLevel, String)] { state.withLock { $0 } }
        var texts: [String] { all.map(\.1) }
    }

    func logger(_ minimumLevel: TokenEventLevel, into lines: Lines) -> TokenEventLogger {
        TokenEventLogger(minimumLevel: minimumLevel) { level, line in lines.add(level, line) }
    }

    @Test func everyEventHasTheLevelItsKindCalls() {
        let error = FleetAuthError(reason: .unexpectedStatus, message: "HTTP 503", scope: v42, status: 503)
        let cases: [(TokenEvent.Detail, TokenEventLevel)] = [
            (.servedFresh(v42, fingerprint: "tok_1"), .debug),
            (.servedStale(v42, fingerprint: "tok_1"), .debug),
            (.failureReplayed(v42, error: error), .debug),
            (.fetchStarted(v42, attempt: 1), .debug),
            (.refreshScheduled(v42), .debug),
            (.fetchSucceeded(v42, fingerprint: "tok_1", duration: 0.2, expiresIn: 3600), .info),
            (.invalidated(v42, fingerprint: "tok_1", dropped: true), .info),
            (.invalidatedAll, .info),
            (.evicted(v42, usable: false, capacity: 1024), .info),
            (.evicted(v42, usable: true, capacity: 1024), .warning),
            (.fetchFailed(v42, error: error, duration: 0.1, retryIn: 0.5), .warning),
            (.fetchFailed(v42, error: error, duration: 0.1, retryIn: nil), .error),
        ]
        for (detail, level) in cases {
            let event = TokenEvent(detail)
            #expect(event.level == level, "\(event)")
            // What an app reads without the detail: the scope, and the error of a failure.
            if case .invalidatedAll = detail { #expect(event.scope == nil) } else { #expect(event.scope == v42) }
            switch detail {
            case .failureReplayed, .fetchFailed: #expect(event.error?.code == .unexpectedStatus)
            default: #expect(event.error == nil, "\(event)")
            }
        }
        #expect(TokenEventLevel.allCases.sorted() == [.debug, .info, .warning, .error])
    }

    /// A failed request counts under one kind by what follows it: another attempt, a refused
    /// answer, or the end of the fetch, as an app's metrics count them.
    @Test func aFailedRequestCountsUnderTheKindOfWhatFollows() {
        let status = FleetAuthError(reason: .unexpectedStatus, message: "HTTP 503")
        let malformed = FleetAuthError(reason: .malformedResponse, message: "not JSON")
        let cases: [(TokenEvent.Detail, TokenEvent.Kind)] = [
            (.fetchFailed(v42, error: status, duration: 0.1, retryIn: 0.5), .fetchRetried),
            (.fetchFailed(v42, error: status, duration: 0.1, retryIn: nil), .fetchFailed),
            (.fetchFailed(v42, error: malformed, duration: 0.1, retryIn: nil), .rejected),
        ]
        for (detail, kind) in cases { #expect(TokenEvent(detail).kind == kind, "\(TokenEvent(detail))") }
    }

    /// Every event's line begins with its kind, the name an alert greps logs for: a retried or
    /// rejected attempt is not a `fetchFailed`, a sign-out is `signedOut`.
    @Test func everyDescriptionBeginsWithItsKind() {
        let status = FleetAuthError(reason: .unexpectedStatus, message: "HTTP 503", scope: v42, status: 503)
        let malformed = FleetAuthError(reason: .malformedResponse, message: "not JSON")
        let details: [TokenEvent.Detail] = [
            .fetchStarted(v42, attempt: 1),
            .fetchSucceeded(v42, fingerprint: "tok_1", duration: 0.2, expiresIn: 3600),
            .fetchFailed(v42, error: status, duration: 0.1, retryIn: 0.5),
            .fetchFailed(v42, error: status, duration: 0.1, retryIn: nil),
            .fetchFailed(v42, error: malformed, duration: 0.1, retryIn: nil),
            .servedFresh(v42, fingerprint: "tok_1"),
            .failureReplayed(v42, error: status),
            .servedStale(v42, fingerprint: "tok_1"),
            .servedDegraded(v42, fingerprint: "tok_1", remaining: 120, reason: status),
            .clockDisagreement(v42, fingerprint: "tok_1", offset: 600),
            .refreshScheduled(v42),
            .invalidated(v42, fingerprint: "tok_1", dropped: true),
            .invalidatedAll,
            .evicted(v42, usable: false, capacity: 1024),
            .evicted(v42, usable: true, capacity: 1024),
            .notSent(v42, error: status, retryIn: 1),
        ]
        for detail in details {
            let event = TokenEvent(detail)
            let first = event.description.prefix { $0 != " " && $0 != ":" }
            #expect(first == event.kind.description, "\(event)")
            // The level is the one the kind has, which the documentation lists.
            #expect(event.kind.level == event.level, "\(event)")
        }
    }

    @Test func lineNamesTheLevelTheTagAndTheEvent() {
        let lines = Lines()
        logger(.info, into: lines).log(
            TokenEvent(.fetchSucceeded(v42, fingerprint: "tok_1a2b3c4d", duration: 0.18, expiresIn: 3600)))
        #expect(
            lines.texts == ["info fleetauth: fetchSucceeded vehicle v-42 tok_1a2b3c4d in 0.180 s, expires in 3600 s"])
    }

    @Test func eventsBelowTheMinimumLevelAreNotWritten() {
        let lines = Lines()
        let log = logger(.warning, into: lines)
        log.log(TokenEvent(.servedFresh(v42, fingerprint: "tok_1")))
        log.log(TokenEvent(.fetchSucceeded(v42, fingerprint: "tok_1", duration: 0.2, expiresIn: 3600)))
        log.log(
            TokenEvent(
                .fetchFailed(
                    v42, error: FleetAuthError(reason: .timedOut, message: "no answer in 15 s", scope: v42),
                    duration: 15, retryIn: 1)))
        #expect(lines.all.map(\.0) == [.warning])
        #expect(lines.texts.first?.hasPrefix("warning fleetauth: fetchRetried vehicle v-42 timedOut") == true)
    }

    /// A provider with the logger as its observer: info writes one line per fetch however
    /// many lookups there are; debug adds a line per lookup. No line holds the token.
    @Test func providerLogsFetchesAtInfoAndLookupsAtDebug() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        let info = Lines()
        let debug = Lines()
        let infoLogger = logger(.info, into: info)
        let debugLogger = logger(.debug, into: debug)
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport,
                clock: clock,
                observer: { event in
                    infoLogger.log(event)
                    debugLogger.log(event)
                }))
        var token: AuthToken?
        for _ in 0..<5 { token = try await engine.token(for: v42) }
        let value = try #require(token?.value)

        #expect(info.texts.count == 1)
        #expect(info.texts.first?.hasPrefix("info fleetauth: fetchSucceeded vehicle v-42 tok_") == true)
        #expect(debug.texts.filter { $0.contains("servedFresh") }.count == 4)
        #expect(debug.texts.contains { $0.hasPrefix("debug fleetauth: fetchStarted vehicle v-42 attempt 1") })
        for line in info.texts + debug.texts { #expect(!line.contains(value)) }
    }
}

/// Events say what happened: one outcome per request sent, and a refused token counted as
/// `rejected` whatever the reason.
@Suite("Events balance with what was sent and refused", .timeLimit(.minutes(1)))
struct EventOutcomeTests {
    @Test func aReissuedRejectedTokenIsCountedAsRejected() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        let backend = InMemoryTokenBackend(clock: clock)
        let first = LockedState<TransportResponse?>(nil)
        // The backend answers every request with its first answer: the same token again.
        transport.route("/token") { request in
            if let answer = first.withLock({ $0 }) { return answer }
            let answer = try await backend.respond(to: request)
            first.withLock { $0 = answer }
            return answer
        }
        let events = EventRecorder()
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://b.example/token"), transport: transport, clock: clock,
                observer: { events.record($0) }))
        let vehicle = AuthorizationScope.vehicle("v-42")
        let token = try await engine.token(for: vehicle)
        engine.invalidate(token.value, for: vehicle)
        await #expect(throws: FleetAuthError.self) { try await engine.token(for: vehicle) }
        let kinds = events.all.map(\.kind)
        #expect(kinds.filter { $0 == .fetchStarted }.count == 2)
        #expect(kinds.filter { $0 == .fetchSucceeded }.count == 1)
        #expect(kinds.filter { $0 == .rejected }.count == 1)
        #expect(kinds.filter { $0 == .fetchFailed }.count == 0)
    }

    @Test func aCredentialFailureSendsNothingAndSaysSo() async throws {
        struct SignedOut: Error {}
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        let events = EventRecorder()
        let engine = try TokenEngine(
            configuration: .init(
                endpoint: TokenEndpoint(url: "https://b.example/token", headers: { _ in throw SignedOut() }),
                transport: transport, clock: clock, observer: { events.record($0) }))
        await #expect(throws: FleetAuthError.self) { try await engine.token(for: .vehicle("v-42")) }
        #expect(transport.requests.isEmpty)
        #expect(events.all.filter { $0.kind == .fetchStarted }.isEmpty)
        // Its own kind: started requests and their outcomes still balance (none and none).
        #expect(events.all.filter { $0.kind == .fetchFailed }.isEmpty)
        let notSent = events.all.filter { $0.kind == .requestNotSent }
        #expect(notSent.count == 1 && notSent.first?.error?.code == .credentialsUnavailable)
        #expect(notSent.first?.level == .warning && notSent.first?.retryDelay == nil)
    }
}

/// A sign-out while the app's headers closure runs ends the fetch as a sign-out, not as a
/// missing credential.
@Suite("Sign-out during the headers closure", .timeLimit(.minutes(10)))
struct SignOutDuringHeadersTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theFetchEndsAsSignedOutNotCredentialsUnavailable() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        var endpoint = TokenEndpoint(url: "https://backend.example.com/token")
        endpoint.headers = { _ in
            try await clock.sleep(for: 10)  // the app refreshes its own login first
            return ["Authorization": "Bearer app-credential"]
        }
        let events = LockedState<[TokenEvent]>([])
        let provider = try TokenProvider<TruckContext>(
            endpoint: endpoint, transport: transport, clock: clock, observer: { e in events.withLock { $0.append(e) } })
        let lookup = clock.startSimulated { try await provider.token(for: TruckContext(vehicleID: "v-1")) }
        await clock.settle()
        provider.invalidateAll()
        let outcome = await lookup.result
        let error = try #require(throws: FleetAuthError.self) { try outcome.get() }
        #expect(error.code == .signedOut)
        await clock.settle()
        let failures = events.withLock { $0 }.filter { $0.kind == .requestNotSent }
        #expect(failures.count == 1)
        #expect(failures.first?.error?.code == .signedOut, "\(failures)")
        #expect(events.withLock { $0 }.contains { $0.kind == .fetchStarted } == false)
    }
}
