import FleetAuthCore
import Foundation
import Testing

/// An app's tests make the events its banner, alert rules and dashboard read, with the public
/// factories: each is the SDK's own event of its kind, reads back what it was made with, and
/// compares equal to the same event made again.
@Suite("Token events made by an app", .timeLimit(.minutes(10)))
struct TokenEventInitializerTests {
    let v42 = AuthorizationScope(kind: .vehicle, id: "v-42")
    var outage: FleetAuthError {
        FleetAuthError(code: .unexpectedStatus, message: "HTTP 503", scope: v42, status: 503)
    }

    @Test func anEventReadsBackEveryFieldItWasMadeWith() {
        let retried = TokenEvent.fetchFailed(v42, error: outage, duration: 0.031, retryDelay: 0.512)
        #expect(retried.kind == .fetchRetried && retried.scope == v42 && retried.level == .warning)
        #expect(retried.duration == 0.031 && retried.retryDelay == 0.512 && retried.tokenFingerprint == nil)
        #expect(retried.error?.code == .unexpectedStatus && retried.error?.status == 503)
        #expect(retried.description == "fetchRetried vehicle v-42 unexpectedStatus in 0.031 s, retry in 0.512 s")
        let succeeded = TokenEvent.fetchSucceeded(v42, tokenFingerprint: "tok_1a2b3c4d", duration: 0.2, expiresIn: 3599)
        #expect(succeeded.kind == .fetchSucceeded && succeeded.level == .info)
        #expect(succeeded.tokenFingerprint == "tok_1a2b3c4d" && succeeded.expiresIn == 3599)
        #expect(succeeded.description == "fetchSucceeded vehicle v-42 tok_1a2b3c4d in 0.200 s, expires in 3599 s")
        #expect(TokenEvent.fetchStarted(v42, attempt: 2).attempt == 2)
        let signedOut = TokenEvent.signedOut
        #expect(signedOut.kind == .signedOut && signedOut.scope == nil && signedOut.error == nil)
    }

    /// A failed attempt's kind is the one the SDK gives it: retried when another follows,
    /// rejected when the answer itself was refused, failed otherwise.
    @Test func aFailedAttemptIsCountedAsTheSDKCountsIt() {
        let malformed = FleetAuthError(code: .malformedResponse, message: "not JSON", scope: v42)
        #expect(TokenEvent.fetchFailed(v42, error: outage, duration: 1, retryDelay: 2).kind == .fetchRetried)
        #expect(TokenEvent.fetchFailed(v42, error: outage, duration: 1).kind == .fetchFailed)
        #expect(TokenEvent.fetchFailed(v42, error: malformed, duration: 1).kind == .rejected)
        #expect(TokenEvent.fetchFailed(v42, error: malformed, duration: 1).level == .error)
    }

    /// Every factory's event has the level its kind has in the SDK, so that a test of an alert
    /// rule that filters by level sees what production sends.
    @Test func everyKindHasTheSDKsLevel() {
        let events: [(TokenEvent, TokenEvent.Kind, TokenEventLevel)] = [
            (.servedFresh(v42, tokenFingerprint: "tok_1"), .servedFresh, .debug),
            (.servedStale(v42, tokenFingerprint: "tok_1"), .servedStale, .debug),
            (.failureReplayed(v42, error: outage), .failureReplayed, .debug),
            (.fetchStarted(v42, attempt: 1), .fetchStarted, .debug),
            (.refreshScheduled(v42), .refreshScheduled, .debug),
            (.fetchSucceeded(v42, tokenFingerprint: "tok_1", duration: 0.1, expiresIn: 60), .fetchSucceeded, .info),
            (.invalidated(v42, tokenFingerprint: "tok_1"), .invalidated, .info),
            (.signedOut, .signedOut, .info),
            (.evicted(v42, cacheCapacity: 10), .evicted, .info),
            (.evicted(v42, whileUsable: true, cacheCapacity: 10), .evictedUsable, .warning),
            (.servedDegraded(v42, tokenFingerprint: "tok_1", remaining: 60, error: outage), .servedDegraded, .warning),
            (.clockDisagreement(v42, tokenFingerprint: "tok_1", offset: 90), .clockDisagreement, .warning),
            (.requestNotSent(v42, error: outage), .requestNotSent, .warning),
            (.duplicateProvider(v42, providers: 2), .duplicateProvider, .warning),
            (.fetchFailed(v42, error: outage, duration: 1), .fetchFailed, .error),
        ]
        for (event, kind, level) in events {
            #expect(event.kind == kind && event.level == level, "\(event)")
            #expect(event.description.hasPrefix(kind.description), "\(event)")
        }
    }

    /// Events compare by what an app reads: the same event made twice is equal, one that
    /// differs in any field is not.
    @Test func eventsCompareByWhatTheySay() {
        let event = TokenEvent.fetchFailed(v42, error: outage, duration: 0.2, retryDelay: 1)
        #expect(event == TokenEvent.fetchFailed(v42, error: outage, duration: 0.2, retryDelay: 1))
        #expect(event != TokenEvent.fetchFailed(v42, error: outage, duration: 0.2, retryDelay: 2))
        #expect(event != TokenEvent.fetchFailed(v42, error: outage, duration: 0.2))
        let other = AuthorizationScope(kind: .vehicle, id: "v-43")
        #expect(event != TokenEvent.fetchFailed(other, error: outage, duration: 0.2, retryDelay: 1))
        #expect(TokenEvent.signedOut == .signedOut)
    }

    /// A logger filters an app's event by its level, and writes its line.
    @Test func aLoggerWritesAnAppsEventAsItWritesTheSDKs() {
        let written = LockedState<[String]>([])
        let logger = TokenEventLogger(minimumLevel: .warning) { level, line in written.withLock { $0.append(line) } }
        logger.log(.servedFresh(v42, tokenFingerprint: "tok_1"))
        logger.log(.evicted(v42, whileUsable: true, cacheCapacity: 10))
        let lines = written.withLock { $0 }
        #expect(lines.count == 1 && lines[0].hasPrefix("warning fleetauth: evictedUsable vehicle v-42"), "\(lines)")
    }
}
