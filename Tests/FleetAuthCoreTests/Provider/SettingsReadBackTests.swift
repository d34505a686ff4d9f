import FleetAuthCore
import FleetAuthInMemory
import FleetAuthTestSupport
import Foundation
import Testing

/// What an app sets, it reads back under the initializer's label, and may set again; the
/// provider, not the setting, says whether the values can work.
@Suite("Settings read back under their labels", .timeLimit(.minutes(10)))
struct SettingsReadBackTests {
    /// A provider says what it runs with, under its initializer's labels: an app logs its
    /// settings at startup without keeping a copy of its own.
    @Test func aProviderReadsBackWhatItWasMadeWith() throws {
        let endpoint = TokenEndpoint(
            url: "https://api.example.com/token/{vehicleId}", format: .jwtWithExpirationTimestamp, timeout: 9)
        let refresh = RefreshPolicy(minimumRemainingLifetime: 240, outageTolerance: 120, spreadsRefreshes: false)
        let retry = RetryPolicy(maximumAttempts: 2, deadline: 20)
        let rules = TokenRules(expectedAudience: "https://fleet.example.com/", fleet: .delivery)
        let provider = try TokenProvider<VehicleOnlyContext>(
            endpoint: endpoint, transport: InMemoryTransport(), refresh: refresh, retry: retry, rules: rules,
            cacheCapacity: 512)
        #expect(provider.endpoint.url == endpoint.url && provider.endpoint.timeout == 9)
        #expect(provider.endpoint.format == .jwtWithExpirationTimestamp)
        #expect(provider.refreshPolicy == refresh && provider.retryPolicy == retry && provider.rules == rules)
        #expect(provider.cacheCapacity == 512)
        let defaults = try TokenProvider<VehicleOnlyContext>(endpoint: endpoint, transport: InMemoryTransport())
        #expect(defaults.refreshPolicy == RefreshPolicy() && defaults.retryPolicy == RetryPolicy())
        #expect(defaults.rules == TokenRules() && defaults.cacheCapacity == 131_072)
    }

    /// A context of a test's own, for a provider of `TokenProvider` itself.
    struct VehicleOnlyContext: AuthorizationContext {
        var scope: AuthorizationScope { AuthorizationScope(kind: .vehicle, id: "v-42") }
    }

    @Test func everyRefreshPolicyLabelReadsBack() {
        var policy = RefreshPolicy(
            minimumRemainingLifetime: 301, refreshWindow: 602, maximumLifetime: 3603, minimumLifetime: 34,
            expiryTolerance: 65, adaptsToTraffic: false, latencyMultiplier: 6, refreshJitter: 7,
            outageTolerance: 308, outageFloor: 69, servesDuringOutages: false, spreadsRefreshes: false)
        #expect(policy.minimumRemainingLifetime == 301)
        #expect(policy.refreshWindow == 602)
        #expect(policy.maximumLifetime == 3603)
        #expect(policy.minimumLifetime == 34)
        #expect(policy.expiryTolerance == 65)
        #expect(policy.adaptsToTraffic == false)
        #expect(policy.latencyMultiplier == 6)
        #expect(policy.refreshJitter == 7)
        #expect(policy.outageTolerance == 308)
        #expect(policy.outageFloor == 69)
        #expect(policy.servesDuringOutages == false)
        #expect(policy.spreadsRefreshes == false)
        policy.refreshJitter = 0
        policy.adaptsToTraffic = true
        #expect(
            policy
                == RefreshPolicy(
                    minimumRemainingLifetime: 301, refreshWindow: 602, maximumLifetime: 3603, minimumLifetime: 34,
                    expiryTolerance: 65, adaptsToTraffic: true, latencyMultiplier: 6, refreshJitter: 0,
                    outageTolerance: 308, outageFloor: 69, servesDuringOutages: false, spreadsRefreshes: false))
    }

    @Test func everyRetryPolicyLabelReadsBack() {
        var policy = RetryPolicy(
            maximumAttempts: 5, initialBackoff: 0.25, multiplier: 3, maximumBackoff: 9, jitter: 0.1, deadline: 31,
            failureCooldown: 6)
        #expect(policy.maximumAttempts == 5)
        #expect(policy.initialBackoff == 0.25)
        #expect(policy.multiplier == 3)
        #expect(policy.maximumBackoff == 9)
        #expect(policy.jitter == 0.1)
        #expect(policy.deadline == 31)
        #expect(policy.failureCooldown == 6)
        policy.jitter = 0
        #expect(policy.backoff(afterAttempt: 2, randomUnit: 1) == 0.75)
    }

    @Test func everyTokenEndpointLabelReadsBackAndTheMethodStaysUpperCased() async throws {
        let scope = AuthorizationScope.vehicle("v-1")
        var endpoint = TokenEndpoint(
            url: "https://api.example.com/token", method: "post", idQueryName: "vid", taskQueryName: "tid",
            format: .plainText, headers: { scope in ["X-Vehicle": scope.id] }, timeout: 9,
            maximumResponseBytes: 4096, allowsInsecureHTTP: true)
        #expect(endpoint.url == "https://api.example.com/token")
        #expect(endpoint.method == "POST")
        #expect(endpoint.idQueryName == "vid")
        #expect(endpoint.taskQueryName == "tid")
        #expect(endpoint.format == .plainText)
        #expect(try await endpoint.headers(scope) == ["X-Vehicle": "v-1"])
        #expect(endpoint.timeout == 9)
        #expect(endpoint.maximumResponseBytes == 4096)
        #expect(endpoint.allowsInsecureHTTP)

        endpoint.method = "get"
        #expect(endpoint.method == "GET")
        endpoint.url = "https://other.example.com/token/{vehicleId}"
        let request = try await endpoint.request(for: scope)
        #expect(request.method == "GET")
        #expect(request.url.absoluteString == "https://other.example.com/token/v-1")
        #expect(request.header("X-Vehicle") == "v-1")
    }

    @Test func anEndpointSetWrongFailsWhenTheProviderIsMadeNotWhenSet() throws {
        var endpoint = TokenEndpoint(url: "https://api.example.com/token")
        endpoint.method = "delete"
        endpoint.timeout = -1
        #expect(endpoint.method == "DELETE")
        let error = #expect(throws: FleetAuthError.self) {
            _ = try TokenProvider<DepotContext>(endpoint: endpoint, transport: InMemoryTransport())
        }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func aRetryPolicySetWrongFailsWhenTheProviderIsMade() throws {
        var retry = RetryPolicy()
        retry.jitter = 2
        let error = #expect(throws: FleetAuthError.self) {
            _ = try TokenProvider<DepotContext>(
                endpoint: TokenEndpoint(url: "https://api.example.com/token"), transport: InMemoryTransport(),
                retry: retry)
        }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func everyTokenRulesLabelReadsBack() {
        var rules = TokenRules(expectedAudience: "https://fleet.test/", allowsWildcard: true, fleet: .delivery)
        #expect(rules.expectedAudience == "https://fleet.test/")
        #expect(rules.allowsWildcard)
        #expect(rules.fleet == .delivery)
        rules.expectedAudience = nil
        #expect(rules == TokenRules(expectedAudience: nil, allowsWildcard: true, fleet: .delivery))
    }

    @Test func theLoggersLevelAndDestinationReadBack() {
        let lines = LockedState<[String]>([])
        var logger = TokenEventLogger(minimumLevel: .warning) { _, line in lines.withLock { $0.append(line) } }
        #expect(logger.minimumLevel == .warning)
        let event = TokenEvent(.invalidatedAll)  // an info event
        logger.log(event)
        #expect(lines.withLock { $0 }.isEmpty)
        logger.minimumLevel = .info
        logger.log(event)
        #expect(lines.withLock { $0 } == ["info fleetauth: \(event)"])
        let original = logger.write
        logger.write = { level, line in original(level, "[app] " + line) }
        logger.log(event)
        #expect(lines.withLock { $0 }.last == "[app] info fleetauth: \(event)")
    }

    @Test func aResponseReadsBackTheURLThatAnswered() {
        let url = URL(string: "https://api.example.com/token")
        var response = TransportResponse(status: 200, url: url)
        #expect(response.url == url)
        response.url = nil
        #expect(response.url == nil)
    }
}
