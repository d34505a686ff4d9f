package import Foundation

/// Reads and writes HTTP dates in the IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`).
///
/// Strict by hand rather than a `DateFormatter`, which would also take other forms (a
/// one-digit day); the calendar arithmetic is Foundation's.
package enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date, or `nil` if `text` is not an IMF-fixdate.
    package static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","),
            weekdays.contains(String(fields[0].dropLast())), fields[5] == "GMT",
            let day = Int(fields[1]), fields[1].count == 2, (1...31).contains(day),
            let monthIndex = months.firstIndex(of: String(fields[2])),
            let year = Int(fields[3]), fields[3].count == 4
        else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let moment = DateComponents(
            year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute, second: second)
        return gregorian.date(from: moment)
    }

    /// `date` as an IMF-fixdate (whole seconds, rounded down).
    package static func format(_ date: Date) -> String {
        let (fields, two) = (gregorian.dateComponents(in: gmt, from: date), twoDigits)
        let (weekday, month) = (weekdays[fields.weekday! - 1], months[fields.month! - 1])
        return
            "\(weekday), \(two(fields.day!)) \(month) \(fields.year!) \(two(fields.hour!)):\(two(fields.minute!)):\(two(fields.second!)) GMT"
    }

    /// `date` as `2026-11-22T10:00:00Z` (whole seconds, UTC), for descriptions.
    package static func iso8601(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    private static let gmt = TimeZone(secondsFromGMT: 0)!
    private static let gregorian: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = gmt
        return calendar
    }()

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
