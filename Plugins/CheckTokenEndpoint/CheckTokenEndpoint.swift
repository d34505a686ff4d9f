import Foundation
import PackagePlugin

/// `swift package --allow-network-connections all check-token-endpoint --url URL --vehicle-id ID`:
/// runs `fleetauth check-endpoint` with the same arguments and exits with its status. In
/// Xcode, the same command is offered on a package and on an app's project (File > Packages,
/// or the project's context menu), where Xcode adds `--target NAME` pairs that are dropped.
@main
struct CheckTokenEndpoint: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        try Self.check(with: try context.tool(named: "fleetauth"), arguments: arguments)
    }

    /// Runs `tool` with the arguments `PluginArguments.forwarded(arguments)` gives, and reports
    /// a failing status as the plugin's error.
    static func check(with tool: PluginContext.Tool, arguments: [String]) throws {
        let process = Process()
        process.executableURL = tool.url
        process.arguments = PluginArguments.forwarded(arguments)
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            Diagnostics.error("check-token-endpoint: fleetauth exited with status \(process.terminationStatus)")
        }
    }
}

#if canImport(XcodeProjectPlugin)
    import XcodeProjectPlugin

    /// The command on an app's Xcode project, which is how most iOS apps are built.
    extension CheckTokenEndpoint: XcodeCommandPlugin {
        func performCommand(context: XcodePluginContext, arguments: [String]) throws {
            try Self.check(with: try context.tool(named: "fleetauth"), arguments: arguments)
        }
    }
#endif
