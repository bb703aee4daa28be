import Foundation
import Testing
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcMigration
@testable import MapcTooling

/// Completions a probe of the language server found missing: the functions a mapping's policy
/// gives its expressions, and properties inside a value YAML double-quotes.
@Suite("Editor completions")
struct EditorCompletionTests {
    @Test func policyFunctionsAndPropertiesInsideDoubleQuotesAreOffered() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-completion-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("schemas"), to: folder.appendingPathComponent("schemas"))
        let lines = ["source: v1", "destination: v2", "entityMappings:", "  - name: NoteToNote", "    source: Note", "    destination: Note", "    policy: Shouting",
                     "    attributes:", "      title: \"$source.\"", "      body: FUNCTION($entityPolicy, \"\")", "      image: \"FUNCTION($entityPolicy, \\\"\\\")\""]
        // The cursor: before the closing quote, between the function's quotes.
        let columns = [9: lines[8].count, 10: lines[9].count - 1, 11: lines[10].count - 3]
        let path = folder.appendingPathComponent("mappings/mapping_v1_to_v2.yaml").path
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let registry = PolicyRegistry()
        registry.register(ItemMigrationPolicy.self, as: "Shouting")
        let project = EditorProject(schemasFolder: folder.appendingPathComponent("schemas").path, mappingsFolder: folder.appendingPathComponent("mappings").path, policies: registry)
        func labels(_ line: Int) -> [String] { project.completions(in: path, line: line, column: columns[line] ?? 1).map(\.label) }
        #expect(labels(9).contains("title") && labels(9).contains("body"), "\(labels(9))")
        #expect(labels(10) == ["shout:"], "\(labels(10))")
        #expect(labels(11) == ["shout:"], "\(labels(11))")
    }
}
