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

    /// `date` as `2027-01-15T08:00:00.250Z` (UTC, to the nearest millisecond), as a fleet
    /// service reads an update's time.
    package static func iso8601Milliseconds(_ date: Date) -> String {
        var text: [UInt8] = []
        appendISO8601Milliseconds(date, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends ``iso8601Milliseconds(_:)``'s text to `bytes`, for a body written as bytes. By
    /// hand: `ISO8601DateFormatter` took a microsecond and a half of every update a simulator
    /// sends, and a string of its own per update was an allocation more.
    package static func appendISO8601Milliseconds(_ date: Date, to bytes: inout [UInt8]) {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        // Years 0001 to 9999 only: four digits, as the form has.
        guard (-62_135_596_800_000..<253_402_300_800_000).contains(milliseconds) else {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            bytes += formatter.string(from: date).utf8
            return
        }
        let (seconds, fraction) = floored(Int64(milliseconds), 1000)
        let (day, secondOfDay) = floored(seconds, 86_400)
        // Days since 1970-01-01 to a proleptic Gregorian date (the civil-from-days method).
        let shifted = day + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let fields: [(value: Int64, digits: Int, then: Unicode.Scalar)] = [
            (year, 4, "-"), (month, 2, "-"), (dayOfMonth, 2, "T"), (secondOfDay / 3600, 2, ":"),
            (secondOfDay / 60 % 60, 2, ":"), (secondOfDay % 60, 2, "."), (fraction, 3, "Z"),
        ]
        for field in fields {
            var digits = [UInt8](repeating: UInt8(ascii: "0"), count: field.digits)
            var rest = field.value
            for place in digits.indices.reversed() {
                digits[place] += UInt8(rest % 10)
                rest /= 10
            }
            bytes += digits
            bytes.append(UInt8(ascii: field.then))
        }
    }

    /// Quotient and remainder rounded toward minus infinity, so that the remainder is never negative.
    private static func floored(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    private static let gmt = TimeZone(secondsFromGMT: 0)!
    private static let gregorian: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = gmt
        return calendar
    }()

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
