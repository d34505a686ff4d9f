import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// Expiry runs on the monotonic clock: a user who sets the device's time cannot make an
/// expired token look fresh, nor a fresh one expired; a device that slept sees time pass.
@Suite("Clock changes: wall jumps, sleep, and servers without a Date header", .timeLimit(.minutes(10)))
struct ClockChangeTests {
    let v42 = AuthorizationScope.vehicle("v-42")

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func settingTheClockBackDoesNotKeepAnExpiredTokenAlive() async throws {
        let h = try EngineHarness()
        let first = try await h.engine.token(for: v42)
        h.clock.jumpWallClock(by: -2 * 3600)  // by the wall clock the token now has three hours left
        h.clock.advance(by: 3400)  // but 3400 s have passed: under five minutes are left
        let second = try await h.engine.token(for: v42)
        #expect(second != first)
        #expect(h.transport.requestCount == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func settingTheClockForwardDoesNotExpireAFreshToken() async throws {
        let h = try EngineHarness()
        let first = try await h.engine.token(for: v42)
        h.clock.jumpWallClock(by: 2 * 3600)  // by the wall clock the token expired an hour ago
        let second = try await h.engine.token(for: v42)
        #expect(second == first)
        #expect(h.transport.requestCount == 1)
        #expect(h.engine.cachedUsableToken(for: v42) == first)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aDeviceThatSleptForHoursFetchesANewToken() async throws {
        let h = try EngineHarness()
        let first = try await h.engine.token(for: v42)
        h.clock.advance(by: 3 * 3600)  // asleep: both clocks moved
        let second = try await h.engine.token(for: v42)
        #expect(second != first)
        #expect(try #require(second.expiresAtUptime) - h.clock.uptime() >= 300)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func withoutADateHeaderAnOldTokenIsNotTakenAsFresh() async throws {
        // The backend serves a token minted two hours ago, and no Date header.
        let h = try EngineHarness(backend: .init(clockOffset: -2 * 3600, sendsDateHeader: false), retry: .none)
        do {
            _ = try await h.engine.token(for: v42)
            Issue.record("an hour-old expired token was accepted")
        } catch let error as FleetAuthError {
            #expect(error.reason == .tokenExpired)
            #expect(error.message.contains("Date header"))
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func withoutADateHeaderADeviceBehindGetsNoMoreLifeThanTheTokenHas() async throws {
        // The device's clock is two hours behind the backend's: iat is "in the future".
        let h = try EngineHarness(backend: .init(clockOffset: 2 * 3600, sendsDateHeader: false))
        let token = try await h.engine.token(for: v42)
        #expect(try #require(token.expiresAtUptime) - h.clock.uptime() == 3600)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func withADateHeaderASkewedDeviceIsCorrectedEitherWay() async throws {
        for offset: TimeInterval in [-2 * 3600, 2 * 3600] {
            let h = try EngineHarness(backend: .init(clockOffset: offset))
            let token = try await h.engine.token(for: v42)
            #expect(try #require(token.expiresAtUptime) - h.clock.uptime() == 3600)
        }
    }

    @Test func theManualClockMovesWallTimeAloneWhenTold() {
        let clock = ManualWallClock()
        let (wall, uptime) = (clock.now(), clock.uptime())
        clock.jumpWallClock(by: -60)
        #expect(clock.now() == wall.addingTimeInterval(-60) && clock.uptime() == uptime)
        clock.advance(by: 5)
        #expect(clock.now() == wall.addingTimeInterval(-55) && clock.uptime() == uptime + 5)
    }
}
