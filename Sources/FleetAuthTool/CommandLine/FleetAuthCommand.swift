package import FleetAuthCore
import Foundation

/// The `fleetauth` command line: parses arguments, runs the endpoint check, prints the
/// report and returns the exit status (0 ok, 1 a check failed, 2 usage error).
package enum FleetAuthCommand {
    /// The usage text.
    package static let usage = """
        usage: fleetauth check-endpoint --url URL (--vehicle-id ID [--task-id ID] | --trip-id ID | --tracking-id ID)
                                        [--header 'Name: value']... [--format PRESET] [--post]
                                        [--token-key KEY [--expiry-key KEY --expiry-unit UNIT]]
                                        [--fleet on-demand|delivery] [--allow-wildcard] [--audience AUD|none]
                                        [--timeout SECONDS] [--allow-insecure-http] [--json]

        Fetches a token the way the FleetAuth SDK does and checks the answer: status,
        redirects, content type, size, shape and expiry unit, the JWT's header and claims,
        lifetime, the authorization claim and clock skew. Prints one line per check with
        what to fix; never prints the token (only its fingerprint) or header values.

        --token-key, --expiry-key, --expiry-unit: a body with key names of its own; UNIT is
        seconds, milliseconds (absolute Unix time) or seconds-from-now.
        --fleet: the flavor whose claim key must name the vehicle (on-demand: vehicleid;
        delivery: deliveryvehicleid); without it, the one the token's claim key names.
        --audience: the aud tokens must name, as the SDK requires (default
        \(TokenRules.fleetServiceAudience)); none skips the check.
        --allow-insecure-http: plain http to a host other than loopback, as the SDK's
        allowsInsecureHTTP: for a trusted test network only.
        PRESET: \(TokenResponseFormat.presetNames.map(\.name).joined(separator: ", "))
        (default: try every preset)
        Exit status: 0 nothing failed, 1 a check failed, 2 usage error.
        """

    /// A command line that cannot be run.
    package struct UsageError: Error, Equatable {
        /// What is wrong.
        package let message: String
    }

    /// Runs the command with `arguments` (without the program name), writing the report to
    /// `output` and problems to `errorOutput`; `transport` makes the request.
    package static func run(
        _ arguments: [String], transport: any HTTPTransport, clock: any WallClock = SystemWallClock(),
        output: (String) -> Void, errorOutput: (String) -> Void
    ) async -> Int32 {
        if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
            output(usage)
            return arguments.isEmpty ? 2 : 0
        }
        let parsed: (options: EndpointChecker.Options, json: Bool)
        do {
            parsed = try parse(arguments)
        } catch {
            errorOutput("fleetauth: \(error.message)\n\n\(usage)")
            return 2
        }
        let report = await EndpointChecker(options: parsed.options, transport: transport, clock: clock).run()
        // Whatever the backend echoed of the headers sent (a claim, a redirect's target), no
        // header value reaches the output.
        output((parsed.json ? report.json : report.text).hiding(parsed.options.headers.values))
        return report.exitCode
    }

    /// Parses `check-endpoint` arguments.
    package static func parse(_ arguments: [String]) throws(UsageError) -> (
        options: EndpointChecker.Options, json: Bool
    ) {
        guard arguments.first == "check-endpoint" else {
            throw UsageError(message: "unknown command \(arguments.first ?? ""); the command is check-endpoint")
        }
        var url: String?
        var vehicleID: String?
        var taskID: String?
        var tripID: String?
        var trackingID: String?
        var headers: [String: String] = [:]
        var format: TokenResponseFormat?
        var json = false
        var allowWildcard = false
        var audience: String? = TokenRules.fleetServiceAudience
        var post = false
        var timeout: TimeInterval = 15
        var tokenKey: String?
        var expiryKey: String?
        var expiryUnit: TokenResponseFormat.ExpiryUnit?
        var fleet: FleetFlavor?
        var allowsInsecureHTTP = false
        var rest = arguments.dropFirst()[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let next = rest.first, !next.hasPrefix("--") else {
                throw UsageError(message: "\(flag) needs a value")
            }
            rest = rest.dropFirst()
            return next
        }
        while let flag = rest.first {
            rest = rest.dropFirst()
            switch flag {
            case "--url": url = try value(flag)
            case "--vehicle-id": vehicleID = try value(flag)
            case "--task-id": taskID = try value(flag)
            case "--trip-id": tripID = try value(flag)
            case "--tracking-id": trackingID = try value(flag)
            case "--header":
                let header = try value(flag)
                guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                    throw UsageError(message: "--header takes 'Name: value'")
                }
                headers[String(header[..<colon])] = String(
                    header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            case "--format":
                let name = try value(flag)
                guard let preset = TokenResponseFormat.preset(named: name) else {
                    let swift = TokenResponseFormat.presetNames.first { $0.swift == "." + name || $0.swift == name }
                    let close = swift?.name ?? nearest(to: name, among: TokenResponseFormat.presetNames.map(\.name))
                    throw UsageError(message: "unknown format \(name)\(close.map { "; did you mean \($0)?" } ?? "")")
                }
                format = preset
            case "--timeout":
                guard let seconds = TimeInterval(try value(flag)), seconds > 0 else {
                    throw UsageError(message: "--timeout takes a positive number of seconds")
                }
                timeout = seconds
            case "--fleet":
                let name = try value(flag)
                guard let named = FleetFlavor(named: name) else {
                    throw UsageError(message: "--fleet takes on-demand or delivery, not \(name)")
                }
                fleet = named
            case "--json": json = true
            case "--allow-wildcard": allowWildcard = true
            case "--audience":
                let given = try value(flag)
                audience = given == "none" ? nil : given
            case "--post": post = true
            case "--allow-insecure-http": allowsInsecureHTTP = true
            case "--token-key": tokenKey = try value(flag)
            case "--expiry-key": expiryKey = try value(flag)
            case "--expiry-unit":
                let name = try value(flag)
                switch name {
                case "seconds": expiryUnit = .absoluteSeconds
                case "milliseconds": expiryUnit = .absoluteMilliseconds
                case "seconds-from-now": expiryUnit = .secondsFromNow
                default: throw UsageError(message: "--expiry-unit takes seconds, milliseconds or seconds-from-now")
                }
            default:
                let suggestion = nearest(to: flag, among: flags).map { "; did you mean \($0)?" } ?? ""
                throw UsageError(message: "unknown option \(flag)\(suggestion)")
            }
        }
        guard let url else { throw UsageError(message: "--url is required") }
        switch (tokenKey, expiryKey, expiryUnit) {
        case (nil, nil, nil): break
        case (let tokenKey?, nil, nil) where format == nil: format = .json(tokenKey: tokenKey)
        case (let tokenKey?, let expiryKey?, let unit?) where format == nil:
            format = .json(tokenKey: tokenKey, expiry: .init(key: expiryKey, unit: unit))
        default:
            throw UsageError(
                message: "--token-key (with --expiry-key and --expiry-unit together, or neither) replaces --format")
        }
        let scope: AuthorizationScope
        switch (vehicleID, tripID, trackingID) {
        case (let vehicle?, nil, nil): scope = .vehicle(vehicle, taskID: taskID)
        case (nil, let trip?, nil) where taskID == nil: scope = .trip(trip)
        case (nil, nil, let tracking?) where taskID == nil: scope = .tracking(tracking)
        default:
            throw UsageError(
                message:
                    "give exactly one of --vehicle-id, --trip-id and --tracking-id (--task-id goes with --vehicle-id)")
        }
        do {
            _ = try scope.validated()
        } catch {
            let flag =
                error.message.hasPrefix("The task ID")
                ? "--task-id" : "--\(scope.kind == .tracking ? "tracking" : "\(scope.kind)")-id"
            throw UsageError(message: "\(flag): \(error.message)")
        }
        var options = EndpointChecker.Options(
            url: url, scope: scope, headers: headers, format: format, allowWildcard: allowWildcard, audience: audience,
            method: post ? "POST" : "GET", timeout: timeout, fleet: fleet)
        options.allowsInsecureHTTP = allowsInsecureHTTP
        return (options, json)
    }

    /// Every option `check-endpoint` takes.
    static let flags = [
        "--url", "--vehicle-id", "--task-id", "--trip-id", "--tracking-id", "--header", "--format", "--post",
        "--token-key", "--expiry-key", "--expiry-unit", "--fleet", "--allow-wildcard", "--audience", "--timeout",
        "--allow-insecure-http", "--json",
    ]

    /// The option closest to a mistyped `flag`: one it starts or ends, or one at most a
    /// third of its letters away; `nil` when none is that close.
    static func nearest(to flag: String, among options: [String]) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var row = Array(0...b.count)
            for (i, x) in a.enumerated() {
                var next = [i + 1]
                for (j, y) in b.enumerated() {
                    next.append(min(row[j] + (x == y ? 0 : 1), row[j + 1] + 1, next[j] + 1))
                }
                row = next
            }
            return row[b.count]
        }
        let scored = options.map { ($0, distance(Array(flag), Array($0))) }.sorted { $0.1 < $1.1 }
        if let close = scored.first, close.1 <= max(2, flag.count / 3) { return close.0 }
        return options.first { $0.hasPrefix(flag) || flag.hasPrefix($0) }
    }
}
