import FleetAuthDriver
import Foundation
import Testing

/// The update body is written by hand, not by `JSONSerialization`: it must still be JSON
/// that reads back to the values, whatever their size.
@Suite("A vehicle update's JSON body", .timeLimit(.minutes(10)))
struct UpdateBodyTests {
    @Test(arguments: [
        VehicleLocation(latitude: 52.52, longitude: 13.405, timestamp: Date(timeIntervalSince1970: 1_800_000_000)),
        VehicleLocation(
            latitude: -90, longitude: 180, heading: 359.6, speed: 0, accuracy: 1e-05,
            timestamp: Date(timeIntervalSince1970: 1_800_000_000.123)),
        VehicleLocation(
            latitude: -0.0, longitude: 1.0 / 3, heading: 0, speed: 1e300, accuracy: 4,
            timestamp: Date(timeIntervalSince1970: 0)),
    ])
    func theBodyReadsBackToTheLocation(location: VehicleLocation) throws {
        let body = location.updateBody()
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let last = try #require(object["lastLocation"] as? [String: Any])
        let point = try #require(last["location"] as? [String: Any])
        #expect((point["latitude"] as? NSNumber)?.doubleValue == location.latitude)
        #expect((point["longitude"] as? NSNumber)?.doubleValue == location.longitude)
        #expect((last["speed"] as? NSNumber)?.doubleValue == location.speed)
        #expect((last["horizontalAccuracy"] as? NSNumber)?.doubleValue == location.accuracy)
        #expect((last["heading"] as? NSNumber)?.intValue == location.heading.map { Int($0.rounded()) % 360 })
        let time = try #require(last["updateTime"] as? String)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let read = try #require(formatter.date(from: time))
        #expect(abs(read.timeIntervalSince(location.timestamp)) < 0.001)
        // Keys sorted, as the fleet service's own clients send them.
        #expect(String(decoding: body, as: UTF8.self).hasPrefix(#"{"lastLocation":{"#))
    }

    @Test func theKeysAreSorted() throws {
        let location = VehicleLocation(
            latitude: 1, longitude: 2, heading: 3, speed: 4, accuracy: 5, timestamp: Date(timeIntervalSince1970: 0))
        let text = String(decoding: location.updateBody(), as: UTF8.self)
        let keys = ["heading", "horizontalAccuracy", "location", "speed", "updateTime"]
        let offsets = try keys.map { key in try #require(text.range(of: "\"\(key)\":")).lowerBound }
        #expect(offsets == offsets.sorted(), "\(text)")
        #expect(
            text
                == #"{"lastLocation":{"heading":3,"horizontalAccuracy":5,"location":{"latitude":1,"longitude":2},"speed":4,"updateTime":"1970-01-01T00:00:00.000Z"}}"#
        )
    }
}
