import Foundation
import PackagePlugin

/// `swift package --allow-network-connections all check-token-endpoint --url URL --vehicle-id ID`:
/// runs `fleetauth check-endpoint` with the same arguments and exits with its status.
@main
struct CheckTokenEndpoint: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "fleetauth")
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
