// `fleetauth`: checks a token backend before the SDK is wired to it.
// The logic lives in FleetAuthTool; this file only connects it to the process.
import FleetAuthTool
import FleetAuthURLSession
import Foundation

let status = await FleetAuthCommand.run(
    Array(CommandLine.arguments.dropFirst()), transport: URLSessionTransport(),
    output: { print($0) },
    errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
exit(status)
