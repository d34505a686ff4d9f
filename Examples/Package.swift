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
            dependencies: ["PlatformSDK", library("FleetAuthCore"), library("FleetAuthInMemory")],
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
            dependencies: [library("FleetAuthDriver"), library("FleetAuthConsumer")],
            path: "SeedPort"
        ),
        // The platform's two Swift samples renamed by the porting article's names table and
        // nothing else, built in Swift 5 mode as a team that renames them builds them (one
        // target each: both declare `SampleAccessTokenProvider`).
        .target(
            name: "SeedDriverSample",
            dependencies: [library("FleetAuthDriver")],
            path: "SeedSamples/Driver",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .target(
            name: "SeedConsumerSample",
            dependencies: [library("FleetAuthConsumer")],
            path: "SeedSamples/Consumer",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Stand-ins for the platform driver and consumer SDKs' Objective-C authorization protocols.
        .target(name: "PlatformSDK", path: "PlatformSDK"),
        .executableTarget(
            name: "PlatformAdapter",
            dependencies: [
                "ExampleSupport",
                "PlatformSDK",
                library("FleetAuthDriver"),
                library("FleetAuthURLSession"),
                library("FleetAuthInMemory"),
            ],
            path: "PlatformAdapter"
        ),
        .executableTarget(
            name: "ConsumerPlatformAdapter",
            dependencies: [
                "ExampleSupport",
                "PlatformSDK",
                library("FleetAuthConsumer"),
                library("FleetAuthURLSession"),
                library("FleetAuthInMemory"),
            ],
            path: "ConsumerPlatformAdapter"
        ),
        .executableTarget(
            name: "DeliveryAdapter",
            dependencies: [
                "ExampleSupport",
                "PlatformSDK",
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
                "DriverApp", "ConsumerApp", "CustomTransport", "SeedPort", "PlatformAdapter", "ConsumerPlatformAdapter",
                "DeliveryAdapter",
                "PlatformSDK", "ExampleSupport", "SeedDriverSample", "SeedConsumerSample",
                library("FleetAuthCore"),
                library("FleetAuthDriver"),
                library("FleetAuthConsumer"),
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

// The seed's samples are built as a team that renames them builds them: no upcoming features.
for target in package.targets where !["SeedDriverSample", "SeedConsumerSample"].contains(target.name) {
    target.swiftSettings = [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
