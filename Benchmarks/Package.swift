// swift-tools-version: 6.2
// FleetAuth's benchmarks, in a package of their own so that the library's manifest stays
// exactly what apps depend on. Run from this folder: `swift run -c release fleetauth-bench`.
import PackageDescription

let package = Package(
    name: "FleetAuthBenchmarks",
    // The peers use Synchronization's Mutex and Atomic (macOS 15 and later); the library does not.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(name: "FleetAuth", path: "..")],
    targets: [
        // What the benchmarks measure: FleetAuth's lookups and the peers they are judged against.
        .target(
            name: "BenchmarkSubjects",
            dependencies: [
                .product(name: "FleetAuthCore", package: "FleetAuth"),
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
            ]
        ),
        .executableTarget(
            name: "fleetauth-bench",
            dependencies: [
                "BenchmarkSubjects",
                .product(name: "FleetAuthCore", package: "FleetAuth"),
                .product(name: "FleetAuthDriver", package: "FleetAuth"),
                .product(name: "FleetAuthInMemory", package: "FleetAuth"),
                .product(name: "FleetAuthFleetService", package: "FleetAuth"),
                .product(name: "FleetAuthURLSession", package: "FleetAuth"),
            ]
        ),
        // The loopback token backend and fleet service of `fleetauth-bench --http`, in C, so
        // that the server costs little beside the clients measured.
        .executableTarget(name: "loopback-fleet-service"),
        // One design's lookups on the main thread alone, for callgrind (`fleetauth-bench --instructions`).
        .executableTarget(name: "fleetauth-instructions", dependencies: ["BenchmarkSubjects"]),
    ]
)

for target in package.targets where target.name != "loopback-fleet-service" {
    target.swiftSettings = [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
