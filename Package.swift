// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "FleetAuth",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "FleetAuthCore", targets: ["FleetAuthCore"]),
        .library(name: "FleetAuthFleetService", targets: ["FleetAuthFleetService"]),
        .library(name: "FleetAuthDriver", targets: ["FleetAuthDriver"]),
        .library(name: "FleetAuthConsumer", targets: ["FleetAuthConsumer"]),
        .library(name: "FleetAuthURLSession", targets: ["FleetAuthURLSession"]),
        .library(name: "FleetAuthInMemory", targets: ["FleetAuthInMemory"]),
        .library(name: "FleetAuthTransportTesting", targets: ["FleetAuthTransportTesting"]),
        .executable(name: "fleetauth", targets: ["fleetauth"]),
        .plugin(name: "CheckTokenEndpoint", targets: ["CheckTokenEndpoint"]),
    ],
    targets: [
        .target(name: "FleetAuthCore"),
        .target(name: "FleetAuthFleetService", dependencies: ["FleetAuthCore"]),
        // The privacy manifest: VehicleReporter sends the vehicle's precise location, linked
        // to the signed-in driver, for the app's functionality, never for tracking.
        .target(
            name: "FleetAuthDriver", dependencies: ["FleetAuthCore", "FleetAuthFleetService"],
            resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "FleetAuthConsumer", dependencies: ["FleetAuthCore", "FleetAuthFleetService"]),
        .target(name: "FleetAuthURLSession", dependencies: ["FleetAuthCore", "FleetAuthFleetService"]),
        .target(name: "FleetAuthInMemory", dependencies: ["FleetAuthCore", "FleetAuthFleetService"]),
        .target(name: "FleetAuthTransportTesting", dependencies: ["FleetAuthCore", "FleetAuthInMemory"]),

        // The endpoint checker: logic in a library, a thin executable and a command plugin.
        .target(name: "FleetAuthTool", dependencies: ["FleetAuthCore"]),
        .executableTarget(name: "fleetauth", dependencies: ["FleetAuthTool", "FleetAuthURLSession"]),
        .plugin(
            name: "CheckTokenEndpoint",
            capability: .command(
                intent: .custom(
                    verb: "check-token-endpoint",
                    description:
                        "Checks that a token backend issues tokens the FleetAuth SDK and the fleet service accept"
                ),
                permissions: [
                    .allowNetworkConnections(
                        scope: .all(),
                        reason: "The check requests a token from the backend URL you pass with --url"
                    )
                ]
            ),
            dependencies: ["fleetauth"]
        ),

        // Helpers shared by the test targets (not a product).
        .target(
            name: "FleetAuthTestSupport",
            dependencies: ["FleetAuthCore", "FleetAuthInMemory"],
            path: "Tests/FleetAuthTestSupport",
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "FleetAuthCoreTests",
            dependencies: ["FleetAuthCore", "FleetAuthInMemory", "FleetAuthTestSupport"]
        ),
        .testTarget(
            name: "FleetAuthFleetServiceTests",
            dependencies: ["FleetAuthFleetService", "FleetAuthInMemory", "FleetAuthTestSupport"]
        ),
        .testTarget(
            name: "FleetAuthDriverTests",
            dependencies: ["FleetAuthDriver", "FleetAuthInMemory", "FleetAuthTestSupport"]
        ),
        .testTarget(
            name: "FleetAuthConsumerTests",
            dependencies: ["FleetAuthConsumer", "FleetAuthInMemory", "FleetAuthTestSupport"]
        ),
        .testTarget(
            name: "FleetAuthURLSessionTests",
            dependencies: [
                "FleetAuthURLSession", "FleetAuthDriver", "FleetAuthConsumer", "FleetAuthInMemory",
                "FleetAuthTransportTesting", "FleetAuthTestSupport",
            ]
        ),
        .testTarget(name: "FleetAuthInMemoryTests", dependencies: ["FleetAuthInMemory", "FleetAuthFleetService"]),
        .testTarget(
            name: "FleetAuthTransportTestingTests", dependencies: ["FleetAuthTransportTesting", "FleetAuthInMemory"]
        ),
        .testTarget(
            name: "FleetAuthToolTests",
            dependencies: ["FleetAuthTool", "FleetAuthURLSession", "FleetAuthInMemory", "FleetAuthTestSupport"]
        ),
    ]
)

// libFuzzer targets, only when FLEETAUTH_FUZZ is set (by .ci/fuzz): their unsafe flag
// must never reach the manifest that other packages depend on.
if Context.environment["FLEETAUTH_FUZZ"] != nil {
    for name in ["FuzzJWTDecoder", "FuzzTokenResponse"] {
        package.targets.append(
            .executableTarget(
                name: name, dependencies: ["FleetAuthCore"], path: "Tests/Fuzz/\(name)",
                swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
    }
}

// Language settings shared by every target (plugins excluded): Swift 6 mode is the
// tools-version default; these upcoming features keep the API surface explicit.
for target in package.targets where target.type != .plugin {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ])
    target.swiftSettings = settings
}
