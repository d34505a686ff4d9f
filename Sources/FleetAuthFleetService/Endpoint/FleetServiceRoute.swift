package import FleetAuthCore
import Foundation

/// The fleet service's REST resources that FleetAuth calls, in one place: the URLs
/// ``FleetServiceEndpoint`` builds and the in-memory fleet service answers come from this
/// table, and a test holds the loopback fixture's table to it.
package struct FleetServiceRoute: Sendable, Hashable {
    /// The collection's path segment: `/v1/providers/{providerID}/{collection}/{id}`.
    package let collection: String
    /// What the ID names.
    package let kind: AuthorizationScope.Kind
    /// The method FleetAuth calls it with: an update of a vehicle, a read of the others.
    package let method: String
    /// The `authorization` claim key that must name the ID.
    package let claimKey: String

    /// An on-demand fleet's vehicles, updated with `PUT`.
    package static let vehicles = FleetServiceRoute(
        collection: "vehicles", kind: .vehicle, method: "PUT", claimKey: FleetFlavor.onDemand.vehicleClaimKey)
    /// A delivery fleet's vehicles, updated with `PATCH`.
    package static let deliveryVehicles = FleetServiceRoute(
        collection: "deliveryVehicles", kind: .vehicle, method: "PATCH",
        claimKey: FleetFlavor.delivery.vehicleClaimKey)
    /// Trips, read by their consumers.
    package static let trips = FleetServiceRoute(collection: "trips", kind: .trip, method: "GET", claimKey: "tripid")
    /// A delivery fleet's shipments as their consumers see them.
    package static let taskTrackingInfo = FleetServiceRoute(
        collection: "taskTrackingInfo", kind: .tracking, method: "GET", claimKey: "trackingid")

    /// Every route.
    package static let all: [FleetServiceRoute] = [.vehicles, .deliveryVehicles, .trips, .taskTrackingInfo]

    /// The route of `fleet`'s vehicles.
    package static func vehicles(of fleet: FleetFlavor) -> FleetServiceRoute {
        fleet == .delivery ? .deliveryVehicles : .vehicles
    }

    /// The path segments after the base URL: `v1`, `providers`, the provider, the collection
    /// and the ID, not yet encoded.
    package func segments(providerID: String, id: String) -> [String] {
        ["v1", "providers", providerID, collection, id]
    }

    /// The route and the ID named by a request path (percent-decoded), if it is one of ours
    /// for `providerID`.
    package static func match(path: String, providerID: String) -> (route: FleetServiceRoute, id: String)? {
        // Over the path's bytes, making a string of the ID only: the in-memory fleet service
        // matches every call of a simulator. Empty segments (`//`) are skipped; a segment
        // with a percent escape is compared decoded, one beyond ASCII as a string.
        var path = path
        return path.withUTF8 { bytes -> (route: FleetServiceRoute, id: String)? in
            var position = 0
            func nextSegment() -> UnsafeBufferPointer<UInt8>? {
                while position < bytes.count, bytes[position] == UInt8(ascii: "/") { position += 1 }
                guard position < bytes.count else { return nil }
                let start = position
                while position < bytes.count, bytes[position] != UInt8(ascii: "/") { position += 1 }
                return UnsafeBufferPointer(rebasing: bytes[start..<position])
            }
            func text(_ segment: UnsafeBufferPointer<UInt8>) -> String {
                let text = String(decoding: segment, as: UTF8.self)
                return segment.contains(UInt8(ascii: "%")) ? text.removingPercentEncoding ?? text : text
            }
            func matches(_ segment: UnsafeBufferPointer<UInt8>?, _ expected: String) -> Bool {
                guard let segment else { return false }
                // Bytes compare as the strings do only in ASCII: elsewhere `==` is Unicode's equivalence.
                if segment.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "%") }) {
                    return text(segment) == expected
                }
                // Buffer against buffer, at once: a string's `utf8` went through its index a byte
                // at a time, and `elementsEqual` over buffers still compares byte by byte.
                return expected.utf8.withContiguousStorageIfAvailable { expected in
                    expected.count == segment.count
                        && (segment.isEmpty || memcmp(expected.baseAddress!, segment.baseAddress!, segment.count) == 0)
                } ?? segment.elementsEqual(expected.utf8)
            }
            guard matches(nextSegment(), "v1"), matches(nextSegment(), "providers"), matches(nextSegment(), providerID),
                let collection = nextSegment(), let route = all.first(where: { matches(collection, $0.collection) }),
                let id = nextSegment(), nextSegment() == nil
            else { return nil }
            return (route, text(id))
        }
    }

    /// The scope a call on this route with `id` is for.
    package func scope(id: String) -> AuthorizationScope {
        AuthorizationScope(kind: kind, id: id)
    }
}
