package import Foundation

extension InMemoryFleetService {
    /// The update with the vehicle's `name` added, as the service answers it; `nil` when the
    /// body is not braced as a JSON object. `name` is spliced in before the first member:
    /// parsing and re-encoding the body through `JSONSerialization` took a third of a
    /// simulator's time on the manual clock. The service does not judge the members.
    package static func naming(_ body: Data, _ name: String) -> Data? {
        guard let open = body.firstIndex(where: { !whitespace.contains($0) }), body[open] == UInt8(ascii: "{"),
            body.last(where: { !whitespace.contains($0) }) == UInt8(ascii: "}")
        else { return nil }
        let rest = body[(open + 1)...]
        let isEmpty = rest.first { !whitespace.contains($0) } == UInt8(ascii: "}")
        // Bytes first, then one copy into `Data`: appending to `Data` piece by piece went
        // through its generic sequence path.
        var named: [UInt8] = []
        named.reserveCapacity(body.count + name.utf8.count + 12)
        named.append(contentsOf: #"{"name":"#.utf8)
        appendQuoted(name, to: &named)
        if !isEmpty { named.append(UInt8(ascii: ",")) }
        // Copied as a block: appended as a sequence, `Data` hands over its bytes one by one.
        rest.withUnsafeBytes { named.append(contentsOf: $0) }
        return Data(named)
    }

    /// Appends `text` as a JSON string; IDs rarely need escaping, so the common case is a copy.
    private static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        if text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
            let escaped = try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed])
        {
            bytes.append(contentsOf: escaped)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: text.utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    private static let whitespace: [UInt8] = [0x20, 0x09, 0x0A, 0x0D]
}
