package import Foundation

extension URL {
    /// The path the in-memory doubles route by: `path` (percent-decoded, no trailing slash),
    /// read as it is written when that is the same. `path` decodes and copies the path at
    /// every read, a tenth of the in-memory transport's own time in a simulator; a path
    /// without a percent escape, a trailing slash or a `;` reads the same either way.
    package var routingPath: String {
        var written = path(percentEncoded: true)
        // One pass over the bytes in place: `utf8.contains` walked the view a byte at a time.
        let plain = written.withUTF8 { bytes in
            !bytes.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: ";") }
                && (bytes.last != UInt8(ascii: "/") || bytes.count == 1)
        }
        return plain ? written : path
    }
}
