// swift-tools-version: 6.2
// FleetAuth's examples, in a package of their own that depends on the library by path, as an
// app does: what they show can only use the public API. Run from the repository's root:
// `swift run --package-path Examples DriverApp`, `swift test --package-path Examples`.
import PackageDescription

/// A library product of FleetAuth, as an app depends on it.
func library(_ name: String) -> Target.Dependency { .product(name: name, package: "FleetAuth") }

let package = Package(
    name: "FleetAuthExamples",
    // The library needs macOS 13 and iOS 16; the examples drive simulations with the manual
    // clock's `runToCompletion`, which needs task executors.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(name: "FleetAuth", path: "..")],
    targets: [
        // Command-line parsing and the shared `main` of the example apps.
        .target(
            name: "ExampleSupport",
            dependencies: [library("FleetAuthCore"), library("FleetAuthInMemory")],
            path: "ExampleSupport"
        ),
        .executableTarget(
            name: "DriverApp",
            dependencies: [
                "ExampleSupport",
                library("FleetAuthDriver"),
                library("FleetAuthURLSession"),
                library("FleetAuthInMemory"),
            ],
            path: "DriverApp"
        ),
        .executableTarget(
            name: "ConsumerApp",
            dependencies: [
                "ExampleSupport",
                library("FleetAuthConsumer"),
                library("FleetAuthURLSession"),
                library("FleetAuthInMemory"),
            ],
            path: "ConsumerApp"
        ),
        .executableTarget(
            name: "SeedPort",
            dependencies: [library("FleetAuthDriver")],
            path: "SeedPort"
        ),
        // A stand-in for the platform driver SDK's Objective-C authorization protocol.
        .target(name: "PlatformDriverSDK", path: "PlatformDriverSDK"),
        .executableTarget(
            name: "PlatformAdapter",
            dependencies: [
                "ExampleSupport",
                "PlatformDriverSDK",
                library("FleetAuthDriver"),
                library("FleetAuthURLSession"),
                library("FleetAuthInMemory"),
            ],
            path: "PlatformAdapter"
        ),
        .executableTarget(
            name: "DeliveryAdapter",
            dependencies: [
                "ExampleSupport",
                "PlatformDriverSDK",
                library("FleetAuthDriver"),
                library("FleetAuthURLSession"),
                library("FleetAuthInMemory"),
            ],
            path: "DeliveryAdapter"
        ),
        .executableTarget(
            name: "CustomTransport",
            dependencies: [
                library("FleetAuthDriver"),
                library("FleetAuthInMemory"),
                library("FleetAuthTransportTesting"),
            ],
            path: "CustomTransport"
        ),

        // Every example run in process, so none can rot.
        .testTarget(
            name: "ExamplesTests",
            dependencies: [
                "DriverApp", "ConsumerApp", "CustomTransport", "SeedPort", "PlatformAdapter", "DeliveryAdapter",
                "PlatformDriverSDK", "ExampleSupport",
                library("FleetAuthCore"),
                library("FleetAuthDriver"),
                library("FleetAuthURLSession"),
            ]
        ),
        // What an app team's own tests do: metrics by event kind, a token's state at a moment,
        // a scripted outage, with the in-memory test double.
        .testTarget(
            name: "AppTeamTests",
            dependencies: [library("FleetAuthDriver"), library("FleetAuthInMemory")]
        ),
    ]
)

for target in package.targets {
    target.swiftSettings = [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
