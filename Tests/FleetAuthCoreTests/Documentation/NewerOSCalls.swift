import Foundation

/// A reading of Swift files for calls that need task executors (macOS 15, iOS 18, tvOS 18,
/// watchOS 11, visionOS 2) made where the package's own platforms (macOS 13, iOS 16) reach:
/// the compiler here ignores `@available`, so a first build on a Mac would be the first to see
/// them. A line is covered when it sits in a declaration marked ``attribute`` (or on that
/// declaration's own lines) or in the braces of an `if` that checks ``check``.
struct NewerOSCalls {
    /// The attribute that marks a declaration needing task executors.
    static let attribute = "@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)"
    /// The condition that guards a use of one at run time.
    static let check = "#available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)"
    /// The standard library's names that need task executors.
    static let standardLibraryNames = [
        "TaskExecutor", "executorPreference:", "withTaskExecutorPreference", "asUnownedTaskExecutor",
    ]

    /// A use of a newer-OS name outside any covered line.
    struct Uncovered: CustomStringConvertible {
        let path: String
        let line: Int
        let name: String
        var description: String { "\(path):\(line) uses \(name) without \(NewerOSCalls.attribute)" }
    }

    /// A file's lines with comments and the insides of string literals blanked, so that braces
    /// and names are read from code only.
    static func code(of lines: [String]) -> [String] {
        var inMultilineString = false
        return lines.map { line in
            var out = ""
            var inString = false
            var index = line.startIndex
            while index < line.endIndex {
                let rest = line[index...]
                if rest.hasPrefix("\"\"\"") {
                    inMultilineString.toggle()
                    index = line.index(index, offsetBy: 3)
                    continue
                }
                let character = line[index]
                if inMultilineString || inString {
                    if character == "\\" {
                        index = line.index(after: index)
                        if index < line.endIndex { index = line.index(after: index) }
                        continue
                    }
                    if character == "\"" && !inMultilineString { inString = false }
                } else if rest.hasPrefix("//") {
                    break
                } else if character == "\"" {
                    inString = true
                } else {
                    out.append(character)
                }
                index = line.index(after: index)
            }
            return out
        }
    }

    /// The names files declare under ``attribute``. A declaration at file scope, or a member
    /// of an extension the attribute marks (not a conformance's, which callers reach through
    /// the protocol), is named everywhere; a marked member of a type only in its own file,
    /// where its callers are. A function with a required first label is named with it
    /// (`run(until:`), so that another `run` does not count.
    static func declaredNames(
        in files: [(path: String, lines: [String])]
    ) -> (everywhere: Set<String>, inFile: [String: Set<String>]) {
        var everywhere: Set<String> = []
        var inFile: [String: Set<String>] = [:]
        for file in files {
            var pending = false
            // Per open brace: whether it opens a type's body.
            var scopes: [Bool] = []
            var markedExtensionDepth: Int?
            for line in code(of: file.lines) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix(attribute) { pending = true }
                let declaration = trimmed.replacingOccurrences(of: attribute, with: "")
                let name = declaredName(declaration)
                let inMarkedExtension = markedExtensionDepth == scopes.count - 1
                if pending || inMarkedExtension, let name {
                    if pending && declaration.hasPrefix("extension ") {
                        if !declaration.contains(":") { markedExtensionDepth = scopes.count }
                    } else if scopes.last == true {
                        inFile[file.path, default: []].insert(name)
                    } else {
                        everywhere.insert(name)
                    }
                    pending = false
                }
                let opensType = name != nil && !declaration.hasPrefix("extension ") && isType(declaration)
                for character in line {
                    if character == "{" {
                        scopes.append(opensType && !scopes.contains(false))
                    } else if character == "}" && !scopes.isEmpty {
                        scopes.removeLast()
                        if let marked = markedExtensionDepth, scopes.count <= marked { markedExtensionDepth = nil }
                    }
                }
            }
        }
        return (everywhere, inFile)
    }

    /// Whether a line declares a type (not an extension).
    static func isType(_ line: String) -> Bool {
        let words = line.split(separator: " ").map(String.init)
        return words.contains { ["struct", "class", "enum", "actor", "protocol"].contains($0) }
    }

    /// The name a line declares, if it declares one.
    static func declaredName(_ line: String) -> String? {
        let words = line.split(whereSeparator: { " \t".contains($0) }).map(String.init)
        let kinds = ["func", "var", "let", "struct", "class", "enum", "actor", "protocol", "extension"]
        guard let kindIndex = words.firstIndex(where: kinds.contains), kindIndex + 1 < words.count else {
            return nil
        }
        let rest = words[(kindIndex + 1)...].joined(separator: " ")
        let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        guard !name.isEmpty else { return nil }
        guard words[kindIndex] == "func" else { return name }
        // The first parameter: a required label names the call.
        guard let open = rest.firstIndex(of: "(") else { return "\(name)(" }
        let parameters = rest[rest.index(after: open)...]
        let first = parameters.prefix { $0 != "," && $0 != ")" }
        let labels = first.prefix { $0 != ":" }.split(separator: " ")
        if let label = labels.first, label != "_", !first.contains("=") { return "\(name)(\(label):" }
        return "\(name)("
    }

    /// The uses of `names` in `file` that no marked declaration or check covers.
    static func uncovered(in file: (path: String, lines: [String]), names: Set<String>) -> [Uncovered] {
        let lines = code(of: file.lines)
        var found: [Uncovered] = []
        var scopes: [Bool] = [false]
        var pending = false
        for (number, line) in lines.enumerated() {
            if line.contains(attribute) || line.contains(check) { pending = true }
            let covered = scopes.last! || pending
            if !covered, let name = names.first(where: { uses(line, $0) }) {
                found.append(Uncovered(path: file.path, line: number + 1, name: name))
            }
            for character in line {
                if character == "{" {
                    scopes.append(scopes.last! || pending)
                    pending = false
                } else if character == "}" && scopes.count > 1 {
                    scopes.removeLast()
                }
            }
        }
        return found
    }

    /// Whether `line` uses `name`: `run(until:` as a call with that label, `settle(` as a call
    /// (parentheses or a trailing closure), any other as a word of its own.
    static func uses(_ line: String, _ name: String) -> Bool {
        let isCall = name.hasSuffix("(")
        let word = isCall ? String(name.dropLast()) : name
        var searchStart = line.startIndex
        while let range = line.range(of: word, range: searchStart..<line.endIndex) {
            searchStart = range.upperBound
            let before = range.lowerBound > line.startIndex ? line[line.index(before: range.lowerBound)] : " "
            guard !(before.isLetter || before.isNumber || before == "_") else { continue }
            if word.hasSuffix(":") { return true }
            let rest = line[range.upperBound...]
            let after = rest.first ?? " "
            guard !(after.isLetter || after.isNumber || after == "_") else { continue }
            if isCall, let next = rest.first(where: { $0 != " " }), !"({<".contains(next) { continue }
            if isCall && rest.allSatisfy({ $0 == " " }) { continue }
            let prefix = line[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
            if prefix.hasSuffix("func") || prefix.hasSuffix("var") { continue }
            return true
        }
        return false
    }
}
