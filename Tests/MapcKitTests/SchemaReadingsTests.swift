import Foundation
import Testing
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcTooling

/// The editor keeps what each schema file reads as: an edit reads its own file again, not the
/// folder, and what is kept never stands for a text it was not read from.
@Suite("Schema readings kept by the editor")
struct SchemaReadingsTests {
    @Test func anEditReadsOnlyItsFileAndGivesWhatAFreshReadGives() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-readings-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("schemas"), to: folder.appendingPathComponent("schemas"))
        let schemas = folder.appendingPathComponent("schemas").path
        let readings = SchemaReadings()
        var kept = EditorProject(schemasFolder: schemas, mappingsFolder: folder.appendingPathComponent("mappings").path)
        kept.schemaReadings = readings
        let files = try SourceFile.yamlFiles(in: schemas).count
        #expect(kept.partialCatalog().catalog.schemas.count == 4 && readings.reads == files)
        #expect(kept.partialCatalog().catalog.schemas.count == 4 && readings.reads == files, "nothing changed: nothing read")
        // An edit: that file alone is read again, and the catalog is the one a fresh read makes.
        let v3 = EditorProject.standardized(folder.appendingPathComponent("schemas/v3.yaml").path)
        let edited = try String(contentsOfFile: v3, encoding: .utf8).replacingOccurrences(of: "type: binary", with: "type: bnary")
        kept.open[v3] = edited
        var fresh = kept
        fresh.schemaReadings = nil
        let (catalog, diagnostics) = kept.partialCatalog()
        #expect(readings.reads == files + 1)
        let (expected, expectedDiagnostics) = fresh.partialCatalog()
        #expect(catalog.schemas.map(\.version) == ["v1", "v2", "v4"] && catalog.schemas.map(\.version) == expected.schemas.map(\.version))
        #expect(diagnostics == expectedDiagnostics && diagnostics.contains { $0.message.contains("bnary") }, "\(diagnostics)")
        // Undone: the file's first text again, read again (what is kept is the last text).
        kept.open[v3] = nil
        #expect(kept.partialCatalog().catalog.schemas.count == 4 && readings.reads == files + 2)
    }
}
