import FleetAuthDriver
import Testing

@Suite("Driver authorization context", .timeLimit(.minutes(10)))
struct DriverAuthorizationContextTests {
    @Test func aContextIsTheVehicleScopeOfItsIDs() {
        let context = DriverAuthorizationContext(vehicleID: "v-42", taskID: "t-1")
        #expect(context.vehicleID == "v-42")
        #expect(context.taskID == "t-1")
        #expect(context.scope == AuthorizationScope(kind: .vehicle, id: "v-42", taskID: "t-1"))
    }

    @Test func changingAnIDRebuildsTheScopeAndKeepsTheOther() {
        var context = DriverAuthorizationContext(vehicleID: "v-42", taskID: "t-1")
        context.vehicleID = "v-7"
        #expect(context.scope == AuthorizationScope(kind: .vehicle, id: "v-7", taskID: "t-1"))
        context.taskID = nil
        #expect(context.scope == AuthorizationScope(kind: .vehicle, id: "v-7"))
        #expect(context.vehicleID == "v-7")
        #expect(context.taskID == nil)
    }

    @Test func idsComeBackInNFCAsTheScopeHoldsThem() {
        // "café" typed with a combining accent is the same vehicle as with a precomposed é.
        let context = DriverAuthorizationContext(vehicleID: "cafe\u{301}", taskID: "te\u{301}")
        #expect(context.vehicleID.unicodeScalars.elementsEqual("caf\u{E9}".unicodeScalars))
        #expect(context.taskID?.unicodeScalars.elementsEqual("t\u{E9}".unicodeScalars) == true)
        #expect(context == DriverAuthorizationContext(vehicleID: "caf\u{E9}", taskID: "t\u{E9}"))
    }

    @Test func aContextHoldsNothingButItsScope() {
        // Every location update passes a context by value: it costs a copy of the scope alone.
        #expect(MemoryLayout<DriverAuthorizationContext>.size == MemoryLayout<AuthorizationScope>.size)
    }
}
