// swift-tools-version: 6.0
// FleetAuth's benchmarks, in a package of their own so that the library's manifest stays
// exactly what apps depend on. Run from this folder: `swift run -c release fleetauth-bench`.
import PackageDescription

let package = Package(
    name: "FleetAuthBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    dependencies: [.package(name: "FleetAuth", path: "..")],
    targets: [
        .executableTarget(
            name: "fleetauth-bench",
            dependencies: [
                .product(name: "FleetAuthCore", package: "FleetAuth"),
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        )
    ]
)
