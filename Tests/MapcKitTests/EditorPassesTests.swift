import Foundation
import Testing
@testable import MapcFoundation
@testable import MapcMigration
@testable import MapcTooling

/// The editor checks a pass of a step with its other passes, as `check` and a run do: a first
/// pass without `pass:` (as `mapc import` writes a step's second mapping model) was said to drop
/// what the second pass reads (the review's find).
@Suite("Editor passes")
struct EditorPassesTests {
    @Test func aFirstPassIsCheckedWithTheOthers() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-editor-passes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["schemas", "mappings"] { try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true) }
        let entities = "entities:\n  A:\n    attributes: { x: string? }\n  B:\n    attributes: { y: string? }\n"
        try "model: S\nversion: v1\n\(entities)".write(to: folder.appendingPathComponent("schemas/v1.yaml"), atomically: true, encoding: .utf8)
        try "model: S\nversion: v2\n\(entities)".write(to: folder.appendingPathComponent("schemas/v2.yaml"), atomically: true, encoding: .utf8)
        try "versions: [v1, v2]\n".write(to: folder.appendingPathComponent("schemas/versions.yaml"), atomically: true, encoding: .utf8)
        let first = folder.appendingPathComponent("mappings/mapping_v1_to_v2.yaml").path
        try "source: v1\ndestination: v2\nentityMappings:\n  - name: AToA\n    source: A\n    destination: A\n    attributes: { x: $source.x }\n".write(toFile: first, atomically: true, encoding: .utf8)
        try "source: v1\ndestination: v2\npass: 2\nentityMappings:\n  - name: BToB\n    source: B\n    destination: B\n    attributes: { y: $source.y }\n"
            .write(to: folder.appendingPathComponent("mappings/mapping_v1_to_v2.pass2.yaml"), atomically: true, encoding: .utf8)
        let editor = EditorProject(schemasFolder: folder.appendingPathComponent("schemas").path, mappingsFolder: folder.appendingPathComponent("mappings").path)
        let found = editor.diagnostics(for: first)
        #expect(!found.contains { $0.message.contains("no entity mapping reads B") }, "\(found)")
    }
}

/// The editor said nothing of a schema whose step into it has no mapping file and cannot be
/// inferred, or drops values, where `check` of the project reports it at the file's `version:`
/// line: the editor stayed green while CI's `check` failed. The step into an open schema is
/// checked as `check` checks it (one definition: `StepDiagnostics`).
@Suite("Editor steps")
struct EditorStepTests {
    @Test func theStepIntoASchemaIsReportedAtIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-editor-steps-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["schemas", "mappings"] { try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true) }
        try "model: S\nversion: v1\nentities:\n  A:\n    attributes: { x: string?, gone: string? }\n".write(to: folder.appendingPathComponent("schemas/v1.yaml"), atomically: true, encoding: .utf8)
        try "model: S\nversion: v2\nentities:\n  A:\n    attributes: { x: string?, y: string }\n".write(to: folder.appendingPathComponent("schemas/v2.yaml"), atomically: true, encoding: .utf8)
        try "model: S\nversion: v3\nentities:\n  A:\n    attributes: { x: string? }\n".write(to: folder.appendingPathComponent("schemas/v3.yaml"), atomically: true, encoding: .utf8)
        try "versions: [v1, v2, v3]\n".write(to: folder.appendingPathComponent("schemas/versions.yaml"), atomically: true, encoding: .utf8)
        let editor = EditorProject(schemasFolder: folder.appendingPathComponent("schemas").path, mappingsFolder: folder.appendingPathComponent("mappings").path)
        let v2 = editor.diagnostics(for: folder.appendingPathComponent("schemas/v2.yaml").path)
        #expect(v2.contains { $0.severity == .error && $0.message.contains("the step v1 -> v2 has no mapping file and cannot be inferred") && $0.location?.line == 2 }, "\(v2)")
        let v3 = editor.diagnostics(for: folder.appendingPathComponent("schemas/v3.yaml").path)
        #expect(v3.contains { $0.severity == .warning && $0.message.contains("the step v2 -> v3 is inferred and drops the values of A.y") }, "\(v3)")
        #expect(editor.diagnostics(for: folder.appendingPathComponent("schemas/v1.yaml").path).isEmpty)
    }
}
