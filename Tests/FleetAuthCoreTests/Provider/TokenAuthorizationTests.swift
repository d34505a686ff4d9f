import FleetAuthCore
import FleetAuthInMemory
import Foundation
import Testing

/// A context of an app's own, to show the protocol is not tied to vehicles or trips.
struct DepotContext: AuthorizationContext {
    var depotID: String
    var scope: AuthorizationScope { .vehicle(depotID) }
}

/// The shape the platform's sample has: only the completion method.
final class CompletionOnlyAuthorization: TokenAuthorization {
    let value: String?
    init(value: String?) { self.value = value }

    func fetchToken(with authorizationContext: DepotContext?, completion: @escaping AuthTokenFetchCompletionHandler) {
        let value = self.value
        Task { completion(value, nil) }
    }
}

@Suite("One provider protocol: what a completion-only provider gets", .timeLimit(.minutes(10)))
struct TokenAuthorizationTests {
    let context = DepotContext(depotID: "d-1")

    @Test func theRedactedTokenCarriesTheJWTsOwnExpiryAndLifetime() async throws {
        let iat = 1_800_000_000.0
        let value = InMemoryTokenBackend.jwt(payload: ["iat": iat, "exp": iat + 1800])
        let token = try await CompletionOnlyAuthorization(value: value).token(for: context)
        let carriesTheValue = token.value == value  // outside #expect: a failure prints no token
        #expect(carriesTheValue)
        #expect(token.scope == .vehicle("d-1"))
        #expect(token.expiresAt == Date(timeIntervalSince1970: iat + 1800))
        #expect(token.lifetime == 1800)
        #expect(!token.description.contains(value))
    }

    @Test func anOpaqueValueHasNoKnownExpiry() async throws {
        let token = try await CompletionOnlyAuthorization(value: "opaque-credential").token(for: context)
        #expect(token.expiresAt == .distantFuture)
        #expect(token.lifetime == 0)
    }

    @Test func invalidationIsANoOpAndAnEmptyCompletionIsAnError() async throws {
        let provider = CompletionOnlyAuthorization(value: nil)
        #expect(provider.invalidate("anything", for: context) == false)
        do {
            _ = try await provider.fetchToken(with: context)
            Issue.record("expected emptyProviderResponse")
        } catch let error as FleetAuthError {
            #expect(error.reason == .emptyProviderResponse)
        }
    }

    @Test func theReadyProviderServesTheSameProtocolForAnyContext() async throws {
        let clock = ManualWallClock()
        let transport = InMemoryTransport(clock: clock)
        transport.mount(InMemoryTokenBackend(clock: clock), at: "/token")
        let provider: any TokenAuthorization<DepotContext> = try TokenProvider<DepotContext>(
            endpoint: TokenEndpoint(url: "https://backend.example.com/token"), transport: transport, clock: clock)
        let token = try await provider.token(for: context)
        #expect(token.claims.covers(.vehicle("d-1")))
        // The provider's own validated token (received on its clock), not the protocol's
        // default wrapping of the raw value.
        #expect(token.receivedAt == clock.now())
        let value = try await provider.fetchToken(with: context)
        let sameValue = value == token.value  // outside #expect: a failure prints no token
        #expect(sameValue)
        #expect((provider as? TokenProvider<DepotContext>)?.statistics.hits == 1)
        #expect(provider.invalidate(token.value, for: context))
    }
}
