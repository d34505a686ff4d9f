package import Foundation

/// Reads numbers out of `JSONSerialization` results, telling JSON booleans apart.
package enum JSONNumber {
    /// The value as a `Double` if it is a JSON number (not `true`/`false`, not a string).
    package static func value(_ raw: Any) -> NSNumber? {
        guard let number = raw as? NSNumber, !(raw is String) else { return nil }
        // JSON booleans arrive as NSNumber with the `char` type code on every platform.
        guard String(cString: number.objCType) != "c" else { return nil }
        return number
    }
}
