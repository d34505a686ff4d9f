import FleetAuthCore
import Foundation

/// A route's path with placeholders as whole segments, `/token/driver/{vehicleId}`: the
/// placeholders of a ``/FleetAuthCore/TokenEndpoint`` URL, read back from a request's path.
enum PathPattern {
    /// The query-item names FleetAuth would send (`vehicleId`, `tripId`, `trackingId`,
    /// `taskId`) with the IDs the placeholders of `pattern` match in `url`'s path, decoded;
    /// `nil` when the path does not match or `pattern` has no placeholder.
    static func fields(of url: URL, matching pattern: String) -> [String: String]? {
        guard pattern.contains("{"),
            let encodedPath = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath
        else { return nil }
        let wanted = pattern.split(separator: "/", omittingEmptySubsequences: false)
        let given = encodedPath.split(separator: "/", omittingEmptySubsequences: false)
        guard wanted.count == given.count else { return nil }
        var fields: [String: String] = [:]
        for (segment, value) in zip(wanted, given) {
            guard segment.hasPrefix("{"), segment.hasSuffix("}") else {
                if segment != value { return nil }
                continue
            }
            guard !value.isEmpty, let id = String(value).removingPercentEncoding else { return nil }
            fields[queryName(of: String(segment.dropFirst().dropLast()))] = id
        }
        return fields
    }

    /// The query item FleetAuth would name a placeholder's ID with: `{deliveryVehicleId}`
    /// and `{id}` name a vehicle.
    private static func queryName(of placeholder: String) -> String {
        switch placeholder.lowercased() {
        case "tripid": AuthorizationScope.Kind.trip.queryItemName
        case "trackingid": AuthorizationScope.Kind.tracking.queryItemName
        case "taskid": AuthorizationScope.Kind.task.queryItemName
        default: AuthorizationScope.Kind.vehicle.queryItemName
        }
    }
}
