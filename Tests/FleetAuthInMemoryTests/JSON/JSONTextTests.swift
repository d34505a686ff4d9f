import FleetAuthInMemory
import Foundation
import Testing

/// The doubles' JSON writer says what `JSONSerialization` says, byte for byte where the two
/// agree on the form (strings) and member for member where they need not (key order).
@Suite("JSON text of the in-memory doubles", .timeLimit(.minutes(10)))
struct JSONTextTests {
    /// Every ASCII character, alone and inside text, and characters beyond ASCII.
    static let strings: [String] =
        (0..<0x80).map { String(UnicodeScalar(UInt8($0))) } + [
            "", "v-42", "a\"b", #"a\b"#, "a/b", "line\nbreak", "tab\tand\u{1}", "é", "車両-7", "🚗", "\u{7F}",
            "\u{2028}", "e\u{301}",
        ]

    @Test(arguments: strings)
    func aStringIsEscapedAsJSONSerializationEscapesIt(text: String) throws {
        var bytes: [UInt8] = []
        JSONText.appendString(text, to: &bytes)
        let expected = try JSONSerialization.data(
            withJSONObject: text, options: [.fragmentsAllowed, .withoutEscapingSlashes])
        #expect(bytes == Array(expected), "\(String(decoding: bytes, as: UTF8.self))")
    }

    @Test func anObjectHasItsMembersInKeyOrderTheLastOfARepeatedKeyAndReadsAsTheSameObject() throws {
        let bytes = JSONText.object([
            ("sub", .string("a/\"b\"")), ("exp", .integer(-1_800_000_000_123)), ("aud", .string("x")),
            ("authorization", .object([("vehicleid", .string("v-1")), ("taskid", .string("t-1"))])), ("Z", .integer(0)),
        ])
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"Z":0,"aud":"x","authorization":{"taskid":"t-1","vehicleid":"v-1"},"exp":-1800000000123,"sub":"a/\"b\""}"#
        )
        let repeated = JSONText.object([("k", .integer(1)), ("j", .string("x")), ("k", .string("last"))])
        #expect(String(decoding: repeated, as: UTF8.self) == #"{"j":"x","k":"last"}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
        let expected: NSDictionary = [
            "sub": "a/\"b\"", "exp": -1_800_000_000_123, "aud": "x", "Z": 0,
            "authorization": ["vehicleid": "v-1", "taskid": "t-1"],
        ]
        #expect(object == expected)
    }
}
