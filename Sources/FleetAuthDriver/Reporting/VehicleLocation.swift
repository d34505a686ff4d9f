import FleetAuthCore
public import Foundation

/// One position report of a vehicle, as the driver app measures it.
public struct VehicleLocation: Sendable, Equatable {
    /// Degrees north, −90…90.
    public var latitude: Double
    /// Degrees east, −180…180.
    public var longitude: Double
    /// Degrees clockwise from north, 0…<360, if known.
    public var heading: Double?
    /// Metres per second, ≥ 0, if known.
    public var speed: Double?
    /// Horizontal accuracy in metres, ≥ 0, if known.
    public var accuracy: Double?
    /// When the position was measured.
    public var timestamp: Date

    /// Creates a location.
    public init(
        latitude: Double, longitude: Double, heading: Double? = nil, speed: Double? = nil, accuracy: Double? = nil,
        timestamp: Date
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.heading = heading
        self.speed = speed
        self.accuracy = accuracy
        self.timestamp = timestamp
    }

    /// What is wrong with the values, or `nil` if they are plausible.
    public var problem: String? {
        if !latitude.isFinite || !(-90...90).contains(latitude) { return "latitude \(latitude) is outside −90…90" }
        if !longitude.isFinite || !(-180...180).contains(longitude) {
            return "longitude \(longitude) is outside −180…180"
        }
        if let heading, !heading.isFinite || heading < 0 || heading >= 360 {
            return "heading \(heading) is outside 0…<360"
        }
        if let speed, !speed.isFinite || speed < 0 { return "speed \(speed) is negative or not finite" }
        if let accuracy, !accuracy.isFinite || accuracy < 0 { return "accuracy \(accuracy) is negative or not finite" }
        return nil
    }

    /// The fleet service's `lastLocation` JSON for an `updateMask=lastLocation` update, keys
    /// sorted. Written directly as bytes rather than through `JSONSerialization` (or a list of
    /// fields joined, or a string), which took much of a simulator's time on the manual
    /// clock: the values are finite numbers (``problem`` is checked first) and a timestamp,
    /// none of which needs escaping.
    package func updateBody() -> Data {
        var json: [UInt8] = []
        json.reserveCapacity(200)
        json += #"{"lastLocation":{"#.utf8
        if let heading { json += #""heading":\#(Int(heading.rounded()) % 360),"#.utf8 }
        if let accuracy { Self.append("horizontalAccuracy", accuracy, to: &json) }
        json += #""location":{"latitude":"#.utf8
        json += Self.number(latitude).utf8
        json += #","longitude":"#.utf8
        json += Self.number(longitude).utf8
        json += "},".utf8
        if let speed { Self.append("speed", speed, to: &json) }
        json += #""updateTime":""#.utf8
        json += HTTPDate.iso8601Milliseconds(timestamp).utf8
        json += #""}}"#.utf8
        return Data(json)
    }

    /// Appends `"key":value,`.
    private static func append(_ key: String, _ value: Double, to json: inout [UInt8]) {
        json.append(UInt8(ascii: "\""))
        json += key.utf8
        json += #"":"#.utf8
        json += number(value).utf8
        json.append(UInt8(ascii: ","))
    }

    /// A finite number as JSON writes it: `13` for a whole number, else Swift's shortest
    /// round-tripping form (`52.52`, `1e-05`).
    private static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }
}
