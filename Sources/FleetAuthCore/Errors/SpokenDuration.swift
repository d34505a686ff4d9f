/// A duration as messages say it: `45 s`, `10 min 5 s`, `3 h` or `3 h 20 min`.
package enum SpokenDuration {
    /// `seconds` (its magnitude, rounded down to whole seconds) in words.
    package static func describe(_ seconds: Double) -> String {
        let total = Int(abs(seconds).rounded(.down))
        let (hours, minutes, rest) = (total / 3600, total % 3600 / 60, total % 60)
        if hours > 0 { return minutes == 0 ? "\(hours) h" : "\(hours) h \(minutes) min" }
        if minutes == 0 { return "\(rest) s" }
        return rest == 0 ? "\(minutes) min" : "\(minutes) min \(rest) s"
    }
}
