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

/// `--format text|json`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}
