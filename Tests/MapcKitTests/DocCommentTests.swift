import Foundation
import Testing

/// Every public symbol of the libraries says what it is for: a `///` comment right above it
/// (operators and `description` witnesses excepted).
@Suite("Documentation comments")
struct DocCommentTests {
    @Test(arguments: ["Sources/MapcFoundation", "Sources/MapcModel", "Sources/MapcStore", "Sources/MapcMigration", "Sources/MapcTooling", "Sources/MapcCLI"])
    func everyPublicSymbolHasADocComment(folder: String) throws {
        let root = packageRoot.appendingPathComponent(folder)
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        var undocumented: [String] = []
        var publicCount = 0
        for file in files {
            let lines = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
            for (index, line) in lines.enumerated() {
                var code = line.trimmingCharacters(in: .whitespaces)
                while code.hasPrefix("@"), let space = code.firstIndex(of: " ") { code = String(code[space...]).trimmingCharacters(in: .whitespaces) }
                if code.hasPrefix("nonisolated(unsafe) ") { code = String(code.dropFirst("nonisolated(unsafe) ".count)) }
                guard code.hasPrefix("public ") || code.hasPrefix("open ") else { continue }
                publicCount += 1
                if code.contains("static func ==") || code.contains("static func <") || code.contains("var description:") || code.contains("var errorDescription:") { continue }
                var above = index - 1
                while above >= 0, lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("@") { above -= 1 }
                if above < 0 || !lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                    undocumented.append("\(folder)/\(file):\(index + 1): \(code.prefix(100))")
                }
            }
        }
        #expect(publicCount > 10, "the scan finds public symbols")
        #expect(undocumented.isEmpty, "\(undocumented.joined(separator: "\n"))")
    }

    /// The cases of a public enum are public symbols too: each says what it stands for, one case
    /// per line so each can.
    @Test(arguments: ["Sources/MapcFoundation", "Sources/MapcModel", "Sources/MapcStore", "Sources/MapcMigration", "Sources/MapcTooling"])
    func everyCaseOfAPublicEnumHasADocComment(folder: String) throws {
        let root = packageRoot.appendingPathComponent(folder)
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        var undocumented: [String] = []
        var cases = 0
        for file in files {
            let lines = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
            // The brace depth of each public enum's body, innermost last.
            var depth = 0
            var enumBodies: [Int] = []
            for (index, line) in lines.enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                if let body = enumBodies.last, depth == body, code.hasPrefix("case ") {
                    cases += 1
                    let above = index > 0 ? lines[index - 1].trimmingCharacters(in: .whitespaces) : ""
                    if !above.hasPrefix("///") || code.contains(", ") && !code.contains("(") {
                        undocumented.append("\(folder)/\(file):\(index + 1): \(code.prefix(100))")
                    }
                }
                let opensPublicEnum = code.range(of: #"^(public |open )(indirect )?enum "#, options: .regularExpression) != nil
                for character in code {
                    if character == "{" {
                        depth += 1
                        if opensPublicEnum && enumBodies.last != depth { enumBodies.append(depth) }
                    } else if character == "}" {
                        if enumBodies.last == depth { enumBodies.removeLast() }
                        depth -= 1
                    }
                }
            }
        }
        if folder != "Sources/MapcTooling" && folder != "Sources/MapcStore" { #expect(cases > 5, "the scan finds cases") }
        #expect(undocumented.isEmpty, "\(undocumented.joined(separator: "\n"))")
    }
}
