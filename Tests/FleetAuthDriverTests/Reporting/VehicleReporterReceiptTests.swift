import FleetAuthDriver
import Testing

/// What an app shows after an update is tested with a receipt made by hand, as the docs' screen
/// function (`tracking(token:lastUpdate:)` in "Token state on screen") takes one.
@Suite("Receipts an app's test builds", .timeLimit(.minutes(10)))
struct VehicleReporterReceiptTests {
    @Test func aReceiptReadsBackWhatItWasMadeWith() {
        let receipt = VehicleReporter.Receipt(status: 200, tokenFingerprint: "tok_1a2b3c4d", attempts: 2)
        #expect(receipt.status == 200 && receipt.tokenFingerprint == "tok_1a2b3c4d" && receipt.attempts == 2)
        #expect(VehicleReporter.Receipt(status: 200, tokenFingerprint: "tok_1").attempts == 1)
        let lastUpdate: Result<VehicleReporter.Receipt, FleetServiceError> = .success(receipt)
        if case .success(let accepted) = lastUpdate { #expect(accepted.attempts == 2) }
    }
}
