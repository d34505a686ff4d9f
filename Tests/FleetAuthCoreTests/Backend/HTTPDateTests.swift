import FleetAuthCore
import Foundation
import Testing

@Suite("HTTP dates", .timeLimit(.minutes(10)))
struct HTTPDateTests {
    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Sun, 22 Nov 2026 13:37:07 GMT", 1_795_354_627),
        ("Tue, 29 Feb 2028 23:59:59 GMT", 1_835_481_599),
    ])
    func parsesAndFormatsKnownDates(text: String, seconds: Double) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds))
        #expect(HTTPDate.format(Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test func roundTripsAcrossCenturies() {
        var seconds = -2_208_988_800.0  // 1900
        while seconds < 7_258_118_400 {  // 2200
            let date = Date(timeIntervalSince1970: seconds)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
            seconds += 86_400 * 37 + 3_607
        }
    }

    /// The update time written by hand reads as Foundation's formatter writes it, across
    /// centuries, leap days, the epoch and dates before it, to the millisecond.
    @Test func theMillisecondFormMatchesFoundations() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var milliseconds: Int64 = -2_208_988_800_000  // 1900
        var checked = 0
        while milliseconds < 7_258_118_400_000 {  // 2200
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(HTTPDate.iso8601Milliseconds(date) == formatter.string(from: date))
            milliseconds += 86_400_000 * 13 + 3_607_123
            checked += 1
        }
        for text in [
            "2024-02-29T23:59:59.999Z", "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.500Z",
            "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
        ] {
            #expect(HTTPDate.iso8601Milliseconds(formatter.date(from: text)!) == text)
        }
        #expect(checked > 8_000)
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994 08:49:37", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
    ])
    func refusesOtherForms(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
