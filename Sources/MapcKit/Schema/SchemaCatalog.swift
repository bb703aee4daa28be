import Foundation

/// The versions of a model found in a schemas folder, indexed by their `version:` names.
public struct SchemaCatalog: Sendable {
    /// The folder that was read.
    public let directory: String
    /// The loaded schemas, oldest first (version names compared with numbers as numbers: v2 < v10).
    public private(set) var schemas: [Schema] = []
    /// Each schema's model hash, in `schemas` order: computed once, compared often.
    private var modelHashes: [String] = []
    /// Warnings from the files that loaded.
    public private(set) var warnings: [Diagnostic] = []

    /// Loads every `.yaml` and `.yml` file in the folder. Throws `DiagnosticsError` when any file
    /// has errors, or when two files declare the same version.
    public init(directory: String) throws {
        self.directory = directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw MapcError.notFound("schemas folder '\(directory)' does not exist; pass --schemas DIR")
        }
        var diagnostics: [Diagnostic] = []
        var byVersion: [String: String] = [:]
        for path in SourceFile.yamlFiles(in: directory) {
            let source: SourceFile
            do { source = try SourceFile.read(path: path) } catch {
                diagnostics.append(.error("\(error)", at: FileLocation(path: path, line: 1, column: 1)))
                continue
            }
            let (schema, found) = SchemaLoader.parse(source: source)
            diagnostics += found
            guard let schema, !found.hasErrors else { continue }
            if let other = byVersion[schema.version] {
                diagnostics.append(.error("version '\(schema.version)' is also declared by \(other)", at: FileLocation(path: path, line: 1, column: 1),
                                          fix: "each schema file must declare a different 'version:'"))
                continue
            }
            byVersion[schema.version] = path
            schemas.append(schema)
        }
        if diagnostics.hasErrors { throw DiagnosticsError(diagnostics) }
        warnings = diagnostics
        schemas.sort { Self.versionPrecedes($0.version, $1.version) }
        modelHashes = schemas.map { VersionHash.modelHash(of: $0) }
    }

    /// Creates a catalog from schemas already loaded (for apps that embed their schemas).
    public init(schemas: [Schema]) {
        self.directory = ""
        self.schemas = schemas.sorted { Self.versionPrecedes($0.version, $1.version) }
        self.modelHashes = self.schemas.map { VersionHash.modelHash(of: $0) }
    }

    /// The schema with that version name.
    public func schema(version: String) -> Schema? {
        schemas.first { $0.version == version }
    }

    /// The schema with that version name, or an error listing the known versions.
    public func require(version: String) throws -> Schema {
        if let schema = schema(version: version) { return schema }
        let known = schemas.map(\.version)
        var message = "unknown version '\(version)' in \(directory.isEmpty ? "the catalog" : directory)"
        if let suggestion = Suggestions.closest(to: version, in: known) { message += "; did you mean '\(suggestion)'?" }
        else { message += known.isEmpty ? "; the folder has no schema files" : "; known versions: \(known.joined(separator: ", "))" }
        throw MapcError.notFound(message)
    }

    /// The versions whose model hash equals `modelHash`.
    public func versions(matchingModelHash modelHash: String) -> [Schema] {
        zip(schemas, modelHashes).filter { $0.1 == modelHash }.map(\.0)
    }

    /// The newest version, or an error when the folder has none.
    public func newest() throws -> Schema {
        guard let last = schemas.last else { throw MapcError.notFound("\(directory.isEmpty ? "the catalog" : directory) has no schema files; pass --schemas DIR") }
        return last
    }

    /// The versions strictly between two others, oldest first (used to follow rename chains).
    public func versions(between older: Schema, and newer: Schema) -> [Schema] {
        schemas.filter { Self.versionPrecedes(older.version, $0.version) && Self.versionPrecedes($0.version, newer.version) }
    }

    /// The version a store is at: among the versions whose model hash equals the store's, the one
    /// its metadata names (hashes identify; the name only breaks ties between identical versions).
    public func version(of metadata: StoreMetadata) -> Schema? {
        let matching = versions(matchingModelHash: metadata.modelHash)
        return matching.first { $0.version == metadata.version } ?? matching.first
    }

    /// Orders version names so that digit runs compare as numbers: v2 < v10, 1.9 < 1.10.
    public static func versionPrecedes(_ a: String, _ b: String) -> Bool {
        a.compare(b, options: [.numeric, .caseInsensitive]) == .orderedAscending
    }
}
