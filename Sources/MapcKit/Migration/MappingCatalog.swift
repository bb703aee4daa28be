import Foundation

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
        if let folder {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw MapcError.notFound("mappings folder '\(folder)' does not exist" + (FileManager.default.fileExists(atPath: "./mappings") ? "; did you mean ./mappings?" : ""))
            }
        }
        try self.init(directory: folder ?? "./mappings")
    }

    /// Reads every `.yaml`/`.yml` mapping file in the folder (a missing folder is an empty catalog).
    /// Throws `DiagnosticsError` when a mapping file does not load.
    public init(directory: String) throws {
        self.directory = directory
        try add(try SourceFile.yamlFiles(in: directory).map { try SourceFile.read(path: $0) })
    }

    private mutating func add(_ sources: [SourceFile]) throws {
        var diagnostics: [Diagnostic] = []
        for source in sources {
            let path = source.path
            // Classified by parsed content: a file with schema keys is not a mapping; anything else
            // is read as one, so a misspelt key is reported rather than the file skipped.
            guard ProjectFileKind.classify(source, fallback: .mapping) == .mapping else { continue }
            let (mapping, found) = MappingLoader.parse(source: source)
            diagnostics += found
            guard let mapping, !found.hasErrors else { continue }
            if let other = mappings.first(where: { $0.source == mapping.source && $0.destination == mapping.destination }) {
                diagnostics.append(.error("this file also maps \(mapping.source) to \(mapping.destination), like \(other.file?.path ?? "another file"); mapc cannot tell which to use",
                                          at: FileLocation(path: path, line: 1, column: 1), fix: "remove or move one of them"))
                continue
            }
            mappings.append(mapping)
        }
        if diagnostics.hasErrors { throw DiagnosticsError(diagnostics) }
    }

    /// The mapping from one version to another, if a file provides it.
    public func mapping(from source: String, to destination: String) -> MappingModel? {
        mappings.first { $0.source == source && $0.destination == destination }
    }
}
