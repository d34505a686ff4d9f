// libFuzzer target: JWT decoding must never crash, whatever the bytes.
// Built only with FLEETAUTH_FUZZ=1 (see .ci/fuzz); never part of a product.
import FleetAuthCore
import Foundation

/// libFuzzer's entry point: decodes `count` bytes at `start` as a JWT; always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWTDecoder(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: Data(bytes: start, count: count), as: UTF8.self)
    if let claims = try? JWTDecoder.decode(text) {
        // Whatever decodes must be usable without trapping.
        _ = claims.covers(.vehicle("v-42"))
        _ = claims.covers(.trip("*"))
        _ = claims.issuedLifetime
    }
    _ = Base64URL.decode(text[...])
    return 0
}
