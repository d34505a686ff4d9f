import FleetAuthCore
import Foundation
import Testing

@Suite("Transport request")
struct TransportRequestTests {
    let url = URL(string: "https://fleet.example.com/v1/providers/p/vehicles/v-1")!

    @Test(
        "A method is kept upper-case whatever case the caller wrote it in",
        arguments: [
            ("PUT", "PUT"), ("put", "PUT"), ("Patch", "PATCH"), ("gET", "GET"), ("M-SEARCH", "M-SEARCH"),
            ("m-search", "M-SEARCH"), ("pétch", "PÉTCH"), ("PéTCH", "PÉTCH"), ("PÉTCH", "PÉTCH"), ("", ""),
        ])
    func methodIsUpperCase(written: String, expected: String) {
        #expect(TransportRequest(method: written, url: url).method == expected)
    }
}
