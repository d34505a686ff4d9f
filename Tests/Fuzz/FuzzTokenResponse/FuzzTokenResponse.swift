// libFuzzer target: parsing a backend answer must never crash and never accept a token
// that fails the rules. Built only with FLEETAUTH_FUZZ=1 (see .ci/fuzz).
//
// Input layout: byte 0 picks the response format, byte 1 the status class; the rest up to
// a first newline is a Date header, and everything after it is the body.
import FleetAuthCore
import Foundation

/// libFuzzer's entry point: parses `count` bytes at `start` as a token answer; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokenResponse(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Data(bytes: start, count: count)
    guard bytes.count >= 2 else { return 0 }
    let presets: [TokenResponseFormat] = [
        .tokenOnly, .swiftSample(), .objectiveCSample(), .jwtWithExpirationTimestamp,
        .tokenWithExpirationTimestampMilliseconds, .tokenWithExpiresInSeconds, .plainText,
    ]
    let format = presets[Int(bytes[0]) % presets.count]
    let status = [200, 200, 200, 201, 302, 401, 429, 503][Int(bytes[1]) % 8]
    let rest = bytes.dropFirst(2)
    let newline = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.startIndex
    let date = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
    let body = Data(rest[newline...].dropFirst())
    let response = TransportResponse(status: status, headers: ["Date": date, "Retry-After": date], body: body)
    let scope = AuthorizationScope.vehicle("v-42")
    let receivedAt = Date(timeIntervalSince1970: 1_800_000_000)
    if let token = try? TokenResponseParser(format: format).token(from: response, for: scope, receivedAt: receivedAt) {
        // An accepted token must satisfy every rule the parser promises.
        precondition(token.claims.covers(scope), "accepted a token that does not cover the scope")
        precondition(token.expiresAt > receivedAt, "accepted an expired token")
        precondition(token.lifetime <= 3600 + 60, "accepted a token living over an hour")
        precondition((200...299).contains(status), "accepted a token from a non-2xx answer")
    }
    _ = TokenResponseParser.retryAfter(response)
    _ = HTTPDate.parse(date)
    return 0
}
