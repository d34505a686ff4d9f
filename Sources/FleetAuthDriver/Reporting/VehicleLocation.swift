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
        json.reserveCapacity(256)
        json.append(#"{"lastLocation":{"#)
        if let heading {
            json.append(#""heading":"#)
            json.appendInteger(Int64(heading.rounded()) % 360)
            json.append(",")
        }
        if let accuracy { json.append(#""horizontalAccuracy":"#, accuracy) }
        json.append(#""location":{"latitude":"#)
        json.appendNumber(latitude)
        json.append(#","longitude":"#)
        json.appendNumber(longitude)
        json.append("},")
        if let speed { json.append(#""speed":"#, speed) }
        json.append(#""updateTime":""#)
        HTTPDate.appendISO8601Milliseconds(timestamp, to: &json)
        json.append(#""}}"#)
        return Data(json)
    }
}

/// Writing the body's parts as bytes: each literal copied at once (appending a string's
/// `utf8` went byte by byte and took about 200 instructions a part).
extension [UInt8] {
    fileprivate mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { append(contentsOf: $0) }
    }

    /// Appends `key` (written with its quotes and colon), `value` and a comma.
    fileprivate mutating func append(_ key: StaticString, _ value: Double) {
        append(key)
        appendNumber(value)
        append(",")
    }

    /// A finite number as JSON writes it: `13` for a whole number, else Swift's shortest
    /// round-tripping form (`52.52`, `1e-05`).
    fileprivate mutating func appendNumber(_ value: Double) {
        if value == value.rounded(), abs(value) < 1e15 { return appendInteger(Int64(value)) }
        var text = value.description
        text.withUTF8 { append(contentsOf: $0) }
    }

    /// `value` in decimal digits, written in place from the last and then copied at once.
    fileprivate mutating func appendInteger(_ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.endIndex
            var rest = value.magnitude
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            if value < 0 { append(UInt8(ascii: "-")) }
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}
