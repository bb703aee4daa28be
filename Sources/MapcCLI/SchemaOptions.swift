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

    /// A project folder beside the schemas folder (`policies`, `mappings`): the project is the
    /// folder holding them, whichever folder a command runs in. Written as the schemas folder is
    /// (relative stays relative), so messages name it so.
    static func projectFolder(_ name: String, besideSchemas schemas: String) -> String {
        let parent = Files.parentFolder(of: schemas)
        return parent == "." ? "./\(name)" : (parent as NSString).appendingPathComponent(name)
    }

    /// A schema named by a file path (if such a file exists) or by a version in the folder;
    /// `loaded`, the folder's catalog when the command has read it already (read again only to
    /// say why a version is not in it).
    func schema(_ fileOrVersion: String, in loaded: SchemaCatalog? = nil) throws -> Schema {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: fileOrVersion, isDirectory: &isDirectory), !isDirectory.boolValue {
            // A bare name that is a version of the folder too: which one is meant is not known
            // (a copy of v3's schema saved as `v1` made a v3 store of `init --schema v1`).
            if !fileOrVersion.contains("/"), !SourceFile.isYAMLName(fileOrVersion),
               (loaded ?? (try? catalog()))?.schema(version: fileOrVersion) != nil {
                throw MapcError.input("'\(fileOrVersion)' names both the file ./\(fileOrVersion) and version \(fileOrVersion) of \(schemas): write ./\(fileOrVersion) for the file, or rename or move the file to name the version")
            }
            let source = try SourceFile.read(path: fileOrVersion)
            // A mapping, order or data file was read as a schema, and its keys reported as schema errors.
            if let other = ProjectFileKind.notASchema(source) { throw MapcError.input(other) }
            return try SchemaLoader.load(source: source).schema
        }
        if !fileOrVersion.contains("/"), let found = loaded?.schema(version: fileOrVersion) { return found }
        do {
            return try catalog().require(version: fileOrVersion)
        } catch {
            // A name like a file's that names no version: the user meant a file, and is told it is missing.
            if fileOrVersion.contains("/") || SourceFile.isYAMLName(fileOrVersion) {
                return try SchemaLoader.load(path: fileOrVersion).schema
            }
            // Another version's file has errors: this one, whose file loads, is still what it
            // is (`hash v1` failed on a typo in v3.yaml, without saying why v1 was affected).
            if error is DiagnosticsError, let partial = loadedVersions(), let schema = partial.schema(version: fileOrVersion) {
                Self.noteFilesWithErrors(partial, in: schemas)
                return schema
            }
            throw error
        }
    }

    /// The catalog for a command that only reads versions (`hash`, `graph`, `diff`) or a store at
    /// its own version (`status`, `dump`, `eval`): the folder's, or, when another version's file
    /// has errors, the versions whose files load, said in a note (a new version half written hid
    /// the store's own); the errors themselves when the files that load do not make an order or
    /// two files declare one version. A store at a version left out is not taken for another
    /// (`SchemaCatalog.version(of:format:)`).
    func readableCatalog() throws -> SchemaCatalog {
        do { return try catalog() } catch let error as DiagnosticsError {
            guard let partial = loadedVersions() else { throw error }
            Self.noteFilesWithErrors(partial, in: schemas)
            return partial
        }
    }

    /// The versions whose files load, when they make an order of their own and every error is in
    /// another version's file; nil otherwise (two files declaring one version: which is it?).
    private func loadedVersions() -> SchemaCatalog? {
        guard let (partial, diagnostics) = try? SchemaCatalog.partial(directory: schemas), partial.orderProblem == nil, !partial.schemas.isEmpty else { return nil }
        let filesInError = Set(partial.versionsWithErrors.values.compactMap { $0.location?.path })
        guard diagnostics.filter({ $0.severity == .error }).allSatisfy({ $0.location.map { filesInError.contains($0.path) } ?? false }) else { return nil }
        return partial
    }

    /// Whether the note about files with errors was said (once a run, however many versions are read).
    nonisolated(unsafe) private static var saidFilesWithErrors = false

    /// Says, once, that some versions' files have errors and the others are read.
    private static func noteFilesWithErrors(_ partial: SchemaCatalog, in schemas: String) {
        guard !saidFilesWithErrors else { return }
        saidFilesWithErrors = true
        let broken = partial.versionsWithErrors.keys.sorted()
        Console.err("note: \(broken.isEmpty ? "some schema files" : "the files of " + broken.joined(separator: ", ")) in \(schemas) have errors (`mapc check` shows them); the versions whose files load are read")
    }
}

/// `--mappings DIR`, shared by the commands that plan migrations.
struct MappingOptions: ParsableArguments {
    @Option(name: .customLong("mappings"), help: ArgumentHelp("The folder of mapping files (default: mappings beside the schemas folder; a folder named here must exist).", valueName: "dir"))
    var folder: String?

    /// The folder's path, for messages and listings: the one named, else `mappings` beside the
    /// schemas folder (./mappings beside ./schemas), as the policies are found.
    func path(_ schemaOptions: SchemaOptions) -> String {
        folder ?? SchemaOptions.projectFolder("mappings", besideSchemas: schemaOptions.schemas)
    }

    /// The mapping files of the folder (one not named that does not exist: none).
    func catalog(_ schemaOptions: SchemaOptions) throws -> MappingCatalog {
        if let folder { return try MappingCatalog(folder: folder) }
        return try MappingCatalog(directory: path(schemaOptions))
    }
}

/// `--policies DIR`: the project's policy files (by default the `policies` folder beside the
/// schemas folder), which mapc compiles and loads before the command runs (see `PolicyLoader`).
struct PolicyOptions: ParsableArguments {
    @Option(name: .customLong("policies"), help: ArgumentHelp("The folder of policy files (*.swift), compiled and loaded before the command runs (default: policies beside the schemas folder).", valueName: "dir"))
    var folder: String?
}

/// `--layout mapc|core-data`: the format of a store a command creates.
struct LayoutOption: ParsableArguments {
    @Option(name: .customLong("layout"), help: ArgumentHelp("The store format to write: mapc (mapc's own) or core-data (Core Data's SQLite format).", valueName: "format"))
    var name: String?

    /// An unknown name is refused while the command line is parsed, with the command's usage.
    func validate() throws { _ = try format() }

    /// The format named, if any.
    func format() throws -> StoreFormat? {
        guard let name else { return nil }
        guard let format = StoreFormat.named(name) else {
            throw ValidationError("unknown layout '\(name)'; use one of: \(StoreFormat.all.map(\.layoutName).joined(separator: ", "))")
        }
        return format
    }
}

/// `--format text|json`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// `--every-version`: every version a step of its own (`Migrator.stepsThroughEveryVersion`);
/// `--infer-directly`: one inference across consecutive inferred steps (`Migrator.infersDirectly`).
struct StepOptions: ParsableArguments {
    @Flag(name: .customLong("every-version"), help: "Make every version a step of its own, each built and validated, instead of taking consecutive inferred steps as one where that changes no value.")
    var everyVersion = false

    @Flag(name: .customLong("infer-directly"), help: "Infer one step across consecutive inferred steps even where that gives other values than the steps through each version, as Core Data's lightweight migration infers straight from the store's model to the current one.")
    var inferDirectly = false

    func validate() throws {
        if everyVersion && inferDirectly { throw ValidationError("--every-version and --infer-directly ask for opposite steps; give one") }
    }

    /// A migrator over the folders the options name, stepping as asked.
    func migrator(_ schemaOptions: SchemaOptions, _ mappingOptions: MappingOptions) throws -> Migrator {
        var migrator = try Migrator(schemas: schemaOptions.catalog(), mappings: mappingOptions.catalog(schemaOptions))
        migrator.stepsThroughEveryVersion = everyVersion
        migrator.infersDirectly = inferDirectly
        return migrator
    }
}
