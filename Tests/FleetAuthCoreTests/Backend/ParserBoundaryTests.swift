import FleetAuthCore
import Foundation
import Testing

/// The parser's limits at their exact edge: each test holds both sides of one boundary.
@Suite("Backend response parsing: each limit to the byte and the second", .timeLimit(.minutes(10)))
struct ParserBoundaryTests {
    let scope = AuthorizationScope.vehicle("v-42")
    let now = Answers.serverNow

    func parse(
        _ response: TransportResponse, format: TokenResponseFormat = .tokenOnly, receivedAt: Date? = nil,
        maximumResponseBytes: Int = 64 * 1024
    ) throws(FleetAuthError) -> AuthToken {
        try TokenResponseParser(format: format, maximumResponseBytes: maximumResponseBytes)
            .token(from: response, for: scope, receivedAt: receivedAt ?? now)
    }

    /// The reason `response` is refused; `nil` when it is accepted.
    func reason(
        _ response: TransportResponse, format: TokenResponseFormat = .tokenOnly, maximumResponseBytes: Int = 64 * 1024
    ) -> FleetAuthError.Reason? {
        do {
            _ = try parse(response, format: format, maximumResponseBytes: maximumResponseBytes)
            return nil
        } catch {
            return error.reason
        }
    }

    /// A body of exactly `maximumResponseBytes` is parsed; one byte more is
    /// `responseTooLarge`.
    @Test func aBodyOfExactlyTheCapIsReadAndOneByteMoreIsRefused() throws {
        let response = Answers.json(["token": Answers.jwt()])
        let size = response.body.count
        #expect(try parse(response, maximumResponseBytes: size).scope == scope)
        #expect(reason(response, maximumResponseBytes: size - 1) == .responseTooLarge)
    }

    /// A token must arrive with at least its minimum remaining life (300 s of an hour), as
    /// the platform's contract words it: exactly 300 s left is accepted, 299 s is
    /// `lifetimeTooShort`.
    @Test func aTokenWithExactlyItsMinimumRemainingLifeIsAccepted() throws {
        let at299 = Answers.jwt(iat: now.timeIntervalSince1970 - 3301)
        #expect(reason(Answers.json(["token": at299])) == .lifetimeTooShort)
        let at300 = Answers.jwt(iat: now.timeIntervalSince1970 - 3300)
        let token = try parse(Answers.json(["token": at300]))
        #expect(token.expiresAt == now.addingTimeInterval(300))
    }

    /// A token whose `exp` is exactly the backend's time of answering has expired
    /// (`tokenExpired`); one with a second left has too little life (`lifetimeTooShort`).
    @Test func aTokenExpiringAsTheBackendAnswersHasExpired() {
        let expiresNow = Answers.jwt(iat: now.timeIntervalSince1970 - 3600)
        #expect(reason(Answers.json(["token": expiresNow])) == .tokenExpired)
        let oneSecondLeft = Answers.jwt(iat: now.timeIntervalSince1970 - 3599)
        #expect(reason(Answers.json(["token": oneSecondLeft])) == .lifetimeTooShort)
    }

    /// Without a `Date` header, a token's `iat` stands for the backend's time while the
    /// device's clock is within 600 s of it (the fleet service's tolerance): exactly 600 s
    /// apart, `iat` is believed and the token has its full hour; 601 s apart, the device's
    /// clock is, and the token has what is left of its hour by that clock.
    @Test(arguments: [(600.0, 3600.0), (601.0, 2999.0)])
    func withoutADateHeaderIatIsBelievedUpToTheClockAgreement(apart: TimeInterval, life: TimeInterval) throws {
        let receivedAt = now.addingTimeInterval(apart)
        let token = try parse(Answers.json(["token": Answers.jwt()], date: nil), receivedAt: receivedAt)
        #expect(token.expiresAt == receivedAt.addingTimeInterval(life))
    }

    /// The body's stated expiry may differ from the JWT's `exp` by the expiry tolerance
    /// (60 s) and no more: 60 s apart is accepted, 61 s is `expiryMismatch`.
    @Test(arguments: [(3660.0, nil), (3661.0, FleetAuthError.Reason.expiryMismatch)])
    func aStatedExpiryMayDifferFromExpByTheTolerance(stated: Double, refused: FleetAuthError.Reason?) {
        let response = Answers.json(["token": Answers.jwt(), "expiresInSeconds": stated])
        #expect(reason(response, format: .tokenWithExpiresInSeconds) == refused)
    }
}
