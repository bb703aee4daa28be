import Foundation
import MapcFoundation

/// The mapping files of a mappings folder, found by their source and destination versions.
public struct MappingCatalog: Sendable {
    /// The folder read ("" for mappings given in code or as text).
    public let directory: String
    /// Mappings that loaded, by file name order.
    public private(set) var mappings: [MappingModel] = []

    /// No mappings: every step is inferred, or refused.
    public init() {
        directory = ""
    }

    /// Mappings given as text, by file name (for an app that bundles its mapping files as
    /// resources or strings). Throws `DiagnosticsError` when one does not load, or two map one step.
    public init(files: [String: String]) throws {
        directory = ""
        try add(files.keys.sorted().map { SourceFile(path: $0, text: files[$0] ?? "") })
    }

    /// The folder's mappings: the folder named (which must exist), or `./mappings` when none is
    /// named (which may be missing: every step is then inferred, or refused).
    public init(folder: String?) throws {
        if let folder { try Self.requireFolder(folder) }
        try self.init(directory: folder ?? "./mappings")
    }

    /// The mappings of a folder already read (an editor's, from the texts it holds), clashes
    /// left out as reading the folder leaves them.
    package init(directory: String, loaded models: [MappingModel]) {
        self.directory = directory
        mappings = Self.withoutClashes(models).kept
    }

    /// A mappings folder named on purpose must exist: a misspelt one is not an empty project
    /// (`check --mappings ./mapings` checked nothing and passed).
    package static func requireFolder(_ folder: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            if FileManager.default.fileExists(atPath: folder) {
                throw MapcError.notFound("the mappings folder '\(folder)' is a file, not a folder: name the folder that holds the mapping files (--mappings DIR)")
            }
            throw MapcError.notFound("mappings folder '\(folder)' does not exist" + (FileManager.default.fileExists(atPath: "./mappings") ? "; did you mean ./mappings?" : ""))
        }
    }

    /// Reads every `.yaml`/`.yml` mapping file in the folder (a missing folder is an empty catalog).
    /// Throws `DiagnosticsError` when a mapping file does not load.
    public init(directory: String) throws {
        self.directory = directory
        try add(try SourceFile.yamlFiles(in: directory).map { try SourceFile.read(path: $0) })
    }

    private mutating func add(_ sources: [SourceFile]) throws {
        let parsed = Self.parse(sources)
        let (kept, clashes) = Self.withoutClashes(parsed.loaded)
        mappings += kept
        let diagnostics = parsed.files.flatMap(\.diagnostics) + clashes
        if diagnostics.hasErrors { throw DiagnosticsError(diagnostics) }
    }

    /// A folder's mapping files among `sources`, each parsed (its model, when it gives one, and
    /// its diagnostics), and the models of those without errors, in order: what `check`, `run`
    /// and the editor read of a mappings folder. Classified by parsed content: a file with schema
    /// keys is not a mapping; anything else is read as one, so a misspelt key is reported rather
    /// than the file skipped.
    package static func parse(_ sources: [SourceFile], reading: (SourceFile) -> FileReading = FileReading.init) -> (files: [(path: String, mapping: MappingModel?, diagnostics: [Diagnostic])], loaded: [MappingModel]) {
        var files: [(path: String, mapping: MappingModel?, diagnostics: [Diagnostic])] = []
        var loaded: [MappingModel] = []
        for source in sources {
            let read = reading(source)
            guard read.isMapping else { continue }
            files.append((source.path, read.mapping, read.diagnostics))
            if let mapping = read.mapping, !read.diagnostics.hasErrors { loaded.append(mapping) }
        }
        return (files, loaded)
    }

    /// One file of a mappings folder as read: whether it is a mapping file (another kind of file
    /// there is said elsewhere), its mapping and its diagnostics. What an editor's server keeps
    /// per file and text (`MappingReadings`).
    package struct FileReading: Sendable {
        /// Whether the file reads as a mapping file.
        package let isMapping: Bool
        /// Its mapping, when it gives one.
        package let mapping: MappingModel?
        /// Its diagnostics.
        package let diagnostics: [Diagnostic]

        /// Reads a file.
        package init(_ source: SourceFile) {
            isMapping = ProjectFileKind.classify(source, fallback: .mapping) == .mapping
            (mapping, diagnostics) = isMapping ? MappingLoader.parse(source: source) : (nil, [])
        }
    }

    /// The mappings a folder's files give, in the folder's order, less each that clashes with
    /// one before it (`clash`), which is in error: what `check` and the editor say of a folder.
    package static func withoutClashes(_ mappings: [MappingModel]) -> (kept: [MappingModel], clashes: [Diagnostic]) {
        var kept: [MappingModel] = [], clashes: [Diagnostic] = []
        for mapping in mappings {
            let clashing = kept.filter { clash($0, mapping) }
            if clashing.isEmpty { kept.append(mapping) } else { clashes.append(clashDiagnostic(mapping, with: clashing.compactMap { $0.file?.path })) }
        }
        return (kept, clashes)
    }

    /// Whether two mapping files are for the same step and pass: one of them could not be run.
    /// Several files of one step are its passes, each with a pass of its own.
    package static func clash(_ a: MappingModel, _ b: MappingModel) -> Bool {
        a.source == b.source && a.destination == b.destination && (a.pass ?? 1) == (b.pass ?? 1)
    }

    /// The error for a mapping file that clashes with others (`clash`), at the file.
    package static func clashDiagnostic(_ mapping: MappingModel, with others: [String]) -> Diagnostic {
        let path = mapping.file?.path ?? "the mapping"
        return .error("this file maps \(mapping.source) to \(mapping.destination)\(mapping.pass.map { " as pass \($0)" } ?? ""), and so does \(others.joined(separator: ", ")); plan and run cannot choose between them, nor tell in which order to run them",
                      at: mapping.valueLocations["pass"] ?? FileLocation(path: path, line: 1, column: 1),
                      fix: "keep one mapping file per step (remove or move the others), or, to run them all as one step in passes (Core Data's multiple passes), give each file 'pass: 1', 'pass: 2', … in the order they run")
    }

    /// Where a mapping file for a step goes, by mapc's naming (`mapping_v2_to_v3.yaml`) in a
    /// folder ("" for the name alone).
    package static func suggestedFile(from source: String, to destination: String, in directory: String) -> String {
        let name = "mapping_\(source)_to_\(destination).yaml"
        return directory.isEmpty ? name : (directory as NSString).appendingPathComponent(name)
    }

    /// The mapping from one version to another, if a file provides it (the first pass, when
    /// several do: `passes(from:to:)`).
    public func mapping(from source: String, to destination: String) -> MappingModel? {
        passes(from: source, to: destination).first
    }

    /// The mapping files of one step, in pass order: usually one; several run one after another
    /// into the same destination, as one step (Apple's "multiple passes").
    public func passes(from source: String, to destination: String) -> [MappingModel] {
        mappings.filter { $0.source == source && $0.destination == destination }.sorted { ($0.pass ?? 1) < ($1.pass ?? 1) }
    }
}
