import Foundation
import Testing
@testable import MapcKit

/// Parses schema text written in a test, as if read from `test.yaml`.
func parseSchema(_ yaml: String) -> (schema: Schema?, diagnostics: [Diagnostic]) {
    SchemaLoader.parse(source: SourceFile(path: "test.yaml", text: yaml))
}

/// Loads schema text that must be valid.
func loadSchema(_ yaml: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Schema {
    let (schema, diagnostics) = parseSchema(yaml)
    #expect(!diagnostics.hasErrors, "unexpected errors: \(diagnostics)", sourceLocation: sourceLocation)
    return try #require(schema)
}

/// The package's root folder, found from this file's path.
let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Loads one of the shipped UnCloudNotes schemas.
func uncloudNotes(_ version: String) throws -> Schema {
    try SchemaLoader.load(path: packageRoot.appendingPathComponent("schemas/\(version).yaml").path).schema
}

/// A fresh temporary folder, removed by the caller's `defer`.
func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
