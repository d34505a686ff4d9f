/// How the `check-token-endpoint` command plugin turns its arguments into `fleetauth`'s.
/// The plugin compiles this same file (a link in `Plugins/CheckTokenEndpoint`), so the
/// tests of this module check what the plugin does. It stays `public` (unlike the rest of
/// this module, which is `package`) because a plugin is compiled without a package name;
/// the module is no product, so nothing outside this package can see it.
public enum PluginArguments {
    /// `check-endpoint` followed by the plugin's arguments, unless they already start with
    /// it. A leading `--` (some shells and tools add one) is dropped, and so is each
    /// `--target NAME` pair: Xcode passes the targets selected when the command is run from
    /// its menu, and the check is of an endpoint, not of a target.
    public static func forwarded(_ arguments: [String]) -> [String] {
        var arguments = withoutTargets(arguments)
        if arguments.first == "--" { arguments.removeFirst() }
        if arguments.first == "check-endpoint" { return arguments }
        return ["check-endpoint"] + arguments
    }

    /// `arguments` without the `--target NAME` pairs (and `--target=NAME`) Xcode adds.
    private static func withoutTargets(_ arguments: [String]) -> [String] {
        var kept: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--target" {
                index += 2
                continue
            }
            if !argument.hasPrefix("--target=") { kept.append(argument) }
            index += 1
        }
        return kept
    }
}
