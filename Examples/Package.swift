// swift-tools-version: 6.2
// FleetAuth's examples, in a package of their own that depends on the library by path, as an
// app does: what they show can only use the public API. Run from the repository's root:
// `swift run --package-path Examples DriverApp`, `swift test --package-path Examples`.
import PackageDescription

let package = Package(
    name: "FleetAuthExamples",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    dependencies: [.package(name: "FleetAuth", path: "..")],
    targets: [
        // Command-line parsing and the shared `main` of the example apps.
        .target(
            name: "ExampleSupport",
            dependencies: [
                .product(name: "FleetAuthCore", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
            ],
            path: "ExampleSupport"
        ),
        .executableTarget(
            name: "DriverApp",
            dependencies: [
                "ExampleSupport",
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
                .product(name: "FleetAuthURLSession", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
            ],
            path: "DriverApp"
        ),
        .executableTarget(
            name: "ConsumerApp",
            dependencies: [
                "ExampleSupport",
                .product(name: "FleetAuthConsumer", package: "FleetAuth"),
                .product(name: "FleetAuthURLSession", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
            ],
            path: "ConsumerApp"
        ),
        .executableTarget(
            name: "SeedPort",
            dependencies: [.product(name: "FleetAuthDriver", package: "FleetAuth")],
            path: "SeedPort"
        ),
        .executableTarget(
            name: "PlatformAdapter",
            dependencies: [
                "ExampleSupport",
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
                .product(name: "FleetAuthURLSession", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
            ],
            path: "PlatformAdapter"
        ),
        .executableTarget(
            name: "CustomTransport",
            dependencies: [
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
                .product(name: "FleetAuthTransportTesting", package: "FleetAuth"),
            ],
            path: "CustomTransport"
        ),

        // Every example run in process, so none can rot.
        .testTarget(
            name: "ExamplesTests",
            dependencies: [
                "DriverApp", "ConsumerApp", "CustomTransport", "SeedPort", "PlatformAdapter", "ExampleSupport",
                .product(name: "FleetAuthCore", package: "FleetAuth"),
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
            ]
        ),
        // What an app team's own tests do: metrics by event kind, a token's state at a moment,
        // a scripted outage, with the in-memory test double.
        .testTarget(
            name: "AppTeamTests",
            dependencies: [
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
            ]
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
