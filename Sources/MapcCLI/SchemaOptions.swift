import ArgumentParser
import Foundation
import MapcKit

/// `--schemas DIR`, shared by every command that looks versions up.
struct SchemaOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The folder of schema files; versions are found by their 'version:' field.", valueName: "dir"))
    var schemas: String = "./schemas"

    /// The catalog of the schemas folder.
    func catalog() throws -> SchemaCatalog {
        try SchemaCatalog(directory: schemas)
    }

    /// A schema named by a file path (if such a file exists) or by a version in the folder.
    func schema(_ fileOrVersion: String) throws -> Schema {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: fileOrVersion, isDirectory: &isDirectory), !isDirectory.boolValue {
            return try SchemaLoader.load(path: fileOrVersion).schema
        }
        return try catalog().require(version: fileOrVersion)
    }
}

/// `--mappings DIR`, shared by the commands that plan migrations.
struct MappingOptions: ParsableArguments {
    @Option(name: .customLong("mappings"), help: ArgumentHelp("The folder of mapping files (default ./mappings; a folder named here must exist).", valueName: "dir"))
    var folder: String?

    /// The folder's path, for messages and listings.
    var path: String { folder ?? "./mappings" }

    /// The mapping files of the folder.
    func catalog() throws -> MappingCatalog { try MappingCatalog(folder: folder) }
}

/// `--format text|json`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}
