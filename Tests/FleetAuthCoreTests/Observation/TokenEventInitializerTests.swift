import FleetAuthCore
import Foundation
import Testing

/// An app's tests make the events its banner, alert rules and dashboard read, through the
/// public initializer: each reads back what it was made with, as the SDK's events of its kind.
@Suite("Token events made by an app", .timeLimit(.minutes(10)))
struct TokenEventInitializerTests {
    let v42 = AuthorizationScope(kind: .vehicle, id: "v-42")

    @Test func anEventReadsBackEveryFieldItWasMadeWith() {
        let error = FleetAuthError(code: .unexpectedStatus, message: "HTTP 503", scope: v42, status: 503)
        let event = TokenEvent(
            kind: .fetchRetried, scope: v42, level: .error, error: error, duration: 0.031,
            tokenFingerprint: "tok_1a2b3c4d", retryDelay: 0.512, attempt: 2, expiresIn: 3600)
        #expect(event.kind == .fetchRetried && event.scope == v42 && event.level == .error)
        #expect(event.tokenFingerprint == "tok_1a2b3c4d" && event.attempt == 2)
        #expect(event.duration == 0.031 && event.expiresIn == 3600 && event.retryDelay == 0.512)
        #expect(event.error?.code == .unexpectedStatus && event.error?.status == 503)
        #expect(
            event.description
                == "fetchRetried vehicle v-42 tok_1a2b3c4d attempt 2 unexpectedStatus HTTP 503 in 0.031 s, expires in 3600 s, retry in 0.512 s"
        )
        let bare = TokenEvent(kind: .signedOut)
        #expect(bare.scope == nil && bare.error == nil && bare.duration == nil && bare.tokenFingerprint == nil)
        #expect(bare.attempt == nil && bare.expiresIn == nil && bare.retryDelay == nil)
        #expect(bare.description == "signedOut")
    }

    /// Without a level, an event has the one the SDK gives its kind, so that a test of an
    /// alert rule that filters by level sees what production sends.
    @Test(arguments: [
        (TokenEvent.Kind.servedFresh, TokenEventLevel.debug), (.servedStale, .debug), (.failureReplayed, .debug),
        (.fetchStarted, .debug), (.refreshScheduled, .debug), (.fetchSucceeded, .info), (.invalidated, .info),
        (.signedOut, .info), (.evicted, .info), (.evictedUsable, .warning), (.fetchRetried, .warning),
        (.servedDegraded, .warning), (.clockDisagreement, .warning), (.requestNotSent, .warning),
        (.fetchFailed, .error), (.rejected, .error),
    ])
    func anEventHasTheLevelTheSDKGivesItsKind(kind: TokenEvent.Kind, level: TokenEventLevel) {
        let event = TokenEvent(kind: kind, scope: v42)
        #expect(event.kind == kind && event.level == level)
        #expect(event.description == "\(kind) vehicle v-42")
    }

    /// A logger filters an app's event by its level, and writes its line.
    @Test func aLoggerWritesAnAppsEventAsItWritesTheSDKs() {
        let written = LockedState<[String]>([])
        let logger = TokenEventLogger(minimumLevel: .warning) { level, line in written.withLock { $0.append(line) } }
        logger.log(TokenEvent(kind: .servedFresh, scope: v42, tokenFingerprint: "tok_1"))
        logger.log(TokenEvent(kind: .evictedUsable, scope: v42))
        #expect(written.withLock { $0 } == ["warning fleetauth: evictedUsable vehicle v-42"])
    }
}
