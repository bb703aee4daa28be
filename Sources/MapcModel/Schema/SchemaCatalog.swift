import Foundation
import MapcFoundation

/// The versions of a model found in a schemas folder, indexed by their `version:` names and
/// ordered oldest first by the folder's declared `VersionOrder`.
public struct SchemaCatalog: Sendable {
    /// The folder that was read ("" for a catalog built in code).
    public let directory: String
    /// The loaded schemas: oldest first when the order is known, by name otherwise.
    public private(set) var schemas: [Schema] = []
    /// The order of the versions; nil when the folder does not declare one and the names allow
    /// none or several (`orderProblem` says why).
    package private(set) var order: VersionOrder?
    /// Why the versions have no order, when `order` is nil.
    package private(set) var orderProblem: String?
    /// Warnings from the files that loaded.
    public private(set) var warnings: [Diagnostic] = []
    /// The versions whose schema files have errors, each with its file's first error: left out
    /// of a catalog made `partial`ly (the others are checked against all the same).
    package private(set) var versionsWithErrors: [String: Diagnostic] = [:]
    /// The version each schema file declares, by its path, with errors or not (an editor asks
    /// which mappings an edit to a file may change).
    package private(set) var versionsByFile: [String: String] = [:]

    /// Loads every `.yaml` and `.yml` schema file in the folder and its version order
    /// (`versions.yaml`, or the version names when they allow exactly one order). Throws
    /// `DiagnosticsError` when any file has errors, when two files declare the same version, or
    /// when the version order file disagrees with the schema files.
    public init(directory: String) throws {
        try self.init(directory: directory, partial: false)
    }

    /// The catalog of the versions whose files load, and every diagnostic of the folder: what
    /// an editor checks a mapping file against while another version's file is half typed, and
    /// what `check` checks a mapping against when an unrelated version's file has errors.
    package static func partial(directory: String) throws -> (catalog: SchemaCatalog, diagnostics: [Diagnostic]) {
        let catalog = try SchemaCatalog(directory: directory, partial: true)
        return (catalog, catalog.loadDiagnostics)
    }

    /// `partial(directory:)` for schema files given as text, each read by `reading` (an editor
    /// keeps the readings of files an edit did not change).
    package static func partial(files: [String: String], directory: String = "",
                                reading: (_ path: String, _ text: String) -> FileReading = { FileReading(SourceFile(path: $0, text: $1)) }) -> (catalog: SchemaCatalog, diagnostics: [Diagnostic]) {
        var catalog = SchemaCatalog(empty: (), directory: directory)
        catalog.load(files.keys.sorted().map { reading($0, files[$0] ?? "") }, diagnostics: [])
        return (catalog, catalog.loadDiagnostics)
    }

    /// Every diagnostic the files gave, errors included (a partial catalog keeps them).
    private var loadDiagnostics: [Diagnostic] = []

    private init(empty: Void, directory: String = "") {
        self.directory = directory
    }

    private init(directory: String, partial: Bool) throws {
        self.directory = directory
        try Self.requireFolder(directory)
        var diagnostics: [Diagnostic] = []
        var sources: [SourceFile] = []
        for path in try SourceFile.yamlFiles(in: directory) {
            do { sources.append(try SourceFile.read(path: path)) } catch {
                diagnostics.append(.error("\(error)", at: FileLocation(path: path, line: 1, column: 1)))
                // Which version it declares is unknown: the order listing one no other file declares is not wrong.
                hasFileOfNoVersion = true
                schemaFilesOfUnknownVersion += 1
            }
        }
        load(sources, diagnostics: diagnostics)
        if !partial, loadDiagnostics.hasErrors { throw DiagnosticsError(loadDiagnostics) }
    }

    /// Schema files (and a version order file) given as text, by file name: for an app that
    /// bundles its schemas as resources or strings. Throws like `init(directory:)`.
    public init(files: [String: String]) throws {
        directory = ""
        load(files.keys.sorted().map { SourceFile(path: $0, text: files[$0] ?? "") }, diagnostics: [])
        if loadDiagnostics.hasErrors { throw DiagnosticsError(loadDiagnostics) }
    }

    /// The schemas folder must exist: one that does not is named, with how to name another.
    package static func requireFolder(_ directory: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            if FileManager.default.fileExists(atPath: directory) {
                throw MapcError.notFound("the schemas folder '\(directory)' is a file, not a folder: name the folder that holds the schema files (--schemas DIR)")
            }
            throw MapcError.notFound("schemas folder '\(directory)' does not exist: name the folder that holds the schema files (the mapc command looks for schemas/ in the folder it runs in; --schemas DIR names another)")
        }
    }

    /// What one file of a schemas folder reads as, worked out from its path and text alone: the
    /// part of loading a folder that an editor can keep for files an edit did not change
    /// (`partial(files:directory:reading:)`).
    package struct FileReading: Sendable {
        package enum Content: Sendable {
            /// A version order file, its versions when it gives them.
            case versionOrder([(name: String, location: FileLocation)]?)
            /// A mapping file or a data file, in the wrong folder (said in its diagnostics).
            case misplaced
            /// A schema file: its schema (nil or with errors when the file has them), the version
            /// it declares even with errors, and where its `version:` is.
            case schema(Schema?, declared: String?, declaration: FileLocation)
        }
        package let path: String
        package let content: Content
        /// The file's own diagnostics.
        package let diagnostics: [Diagnostic]

        /// Reads a file: its YAML once, classified by its keys, then loaded as what it is.
        package init(_ source: SourceFile) {
            path = source.path
            let fallback: ProjectFileKind = (source.path as NSString).lastPathComponent == VersionOrder.fileName ? .versionOrder : .schema
            let document = YAMLDocument(source: source)
            switch ProjectFileKind.classify(document.root, fallback: fallback) {
            case .versionOrder:
                let (versions, found) = VersionOrder.parse(source: source)
                content = .versionOrder(versions)
                diagnostics = found
            case .mapping:
                content = .misplaced
                diagnostics = [.error("this is a mapping file, but it is in the schemas folder", at: FileLocation(path: source.path, line: 1, column: 1),
                                      fix: "move it to the mappings folder")]
            case .schema:
                // A data file in the schemas folder: said as one, not as a schema's dozen errors.
                if let other = ProjectFileKind.notASchema(document.root, path: source.path) {
                    content = .misplaced
                    diagnostics = [.error(other, at: FileLocation(path: source.path, line: 1, column: 1), fix: "move it out of the schemas folder")]
                    return
                }
                let (schema, found) = SchemaLoader.parse(document: document, source: source)
                let declared = schema?.version ?? document.topLevelScalar("version") ?? SchemaCatalog.versionLine(in: source.text)
                let declaration = document.root?["version"].map { document.location(of: $0) } ?? FileLocation(path: source.path, line: 1, column: 1)
                content = .schema(schema, declared: declared, declaration: declaration)
                diagnostics = found
            }
        }
    }

    /// Loads the files; the versions whose files have errors are left out (`versionsWithErrors`),
    /// and every diagnostic is kept in `loadDiagnostics` (the throwing initializers throw them).
    private mutating func load(_ sources: [SourceFile], diagnostics found: [Diagnostic]) {
        load(sources.map(FileReading.init), diagnostics: found)
    }

    /// `load` of files already read.
    private mutating func load(_ readings: [FileReading], diagnostics found: [Diagnostic]) {
        var diagnostics = found
        var byVersion: [String: String] = [:]
        var declaredWithErrors: Set<String> = []
        // The version each schema file declares, by path (a duplicate's too).
        var declaredByFile: [String: String] = [:]
        var orderFile: (path: String, versions: [(name: String, location: FileLocation)])?
        for reading in readings {
            let path = reading.path
            diagnostics += reading.diagnostics
            switch reading.content {
            case .versionOrder(let versions):
                // An order file with errors tells no order a partial check may trust.
                if reading.diagnostics.hasErrors { hasFileOfNoVersion = true }
                if let other = orderFile {
                    diagnostics.append(.error("the version order is also declared in \(other.path)", at: FileLocation(path: path, line: 1, column: 1),
                                              fix: "keep one version order file in the schemas folder"))
                } else if let versions {
                    orderFile = (path, versions)
                }
            case .misplaced:
                continue
            case .schema(let schema, let declared, let declaration):
                guard let schema, !reading.diagnostics.hasErrors else {
                    // A file with errors still declares its version: the order listing it is not wrong.
                    if let declared {
                        declaredWithErrors.insert(declared)
                        versionsByFile[path] = declared
                        if versionsWithErrors[declared] == nil, let first = reading.diagnostics.first(where: { $0.severity == .error }) { versionsWithErrors[declared] = first }
                    } else {
                        hasFileOfNoVersion = true
                        schemaFilesOfUnknownVersion += 1
                    }
                    continue
                }
                if let other = byVersion[schema.version] {
                    declaredByFile[path] = schema.version
                    diagnostics.append(.error("version '\(schema.version)' is also declared by \(other)", at: declaration, length: schema.version.unicodeScalars.count,
                                              fix: "each schema file must declare a different 'version:'"))
                    continue
                }
                byVersion[schema.version] = path
                declaredByFile[path] = schema.version
                versionsByFile[path] = schema.version
                schemas.append(schema)
            }
        }
        if let orderFile {
            diagnostics += Self.checkOrder(orderFile.versions, path: orderFile.path, against: byVersion, declaredWithErrors: declaredWithErrors, declaredByFile: declaredByFile,
                                           filesOfUnknownVersion: schemaFilesOfUnknownVersion)
        }
        loadDiagnostics = diagnostics
        warnings = diagnostics.filter { $0.severity != .error }
        let names = schemas.map(\.version)
        let withErrors = declaredWithErrors.subtracting(names)
        wholeOrder = orderFile.map { $0.versions.map(\.name) } ?? (hasFileOfNoVersion ? nil : VersionOrder.fromNames(names + withErrors.sorted()))
        if let orderFile {
            order = VersionOrder(versions: orderFile.versions.map(\.name), origin: .file(orderFile.path))
        } else if let fromNames = VersionOrder.fromNames(names) {
            order = VersionOrder(versions: fromNames, origin: .names)
        } else {
            let sample = names.sorted().joined(separator: ", ")
            orderProblem = "the order of the versions \(sample) cannot be told from their names; declare it, oldest first, in "
                + "\(directory.isEmpty ? VersionOrder.fileName : (directory as NSString).appendingPathComponent(VersionOrder.fileName)) (versions: [\(sample)] in the right order)"
        }
        arrange()
    }

    /// The version a schema file whose YAML cannot be read declares on a top-level line
    /// (`version: books_11`, quoted or not, a comment after it): the mappings of that version are
    /// then told that its file has errors, not that the version is unknown (and offered another,
    /// a fix that would break them), while it is half typed.
    static func versionLine(in text: String) -> String? {
        for line in SourceFile.lines(of: text) where line.hasPrefix("version:") {
            var value = line.dropFirst("version:".count)
            if let comment = value.range(of: " #") { value = value[..<comment.lowerBound] }
            var trimmed = value.trimmingCharacters(in: .whitespaces)
            if trimmed.count >= 2, let quote = trimmed.first, quote == "'" || quote == "\"", trimmed.last == quote { trimmed = String(trimmed.dropFirst().dropLast()) }
            return trimmed.isEmpty ? nil : trimmed
        }
        return nil
    }

    /// Creates a catalog from schemas already loaded (for apps that embed their schemas), oldest first.
    public init(schemas: [Schema]) {
        self.directory = ""
        self.schemas = schemas
        self.order = VersionOrder(versions: schemas.map(\.version), origin: .code)
        arrange()
    }

    /// Sorts the schemas by the order (by name when there is none).
    private mutating func arrange() {
        if let order {
            schemas.sort { (order.index(of: $0.version) ?? .max) < (order.index(of: $1.version) ?? .max) }
        } else {
            schemas.sort { $0.version.compare($1.version, options: [.numeric]) == .orderedAscending }
        }
    }

    /// Problems with a declared order: versions it lists that no file declares, and versions it leaves out.
    /// (A version only a file with errors declares is not called missing: that file's errors say what is wrong.)
    private static func checkOrder(_ listed: [(name: String, location: FileLocation)], path: String, against files: [String: String],
                                   declaredWithErrors: Set<String>, declaredByFile: [String: String], filesOfUnknownVersion: Int) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let names = Set(listed.map(\.name))
        // A file whose version cannot be read may declare one version listed: its own error
        // stands, and as many versions no file declares may be theirs (more cannot all be).
        let undeclared = listed.filter { files[$0.name] == nil && !declaredWithErrors.contains($0.name) }
        for entry in undeclared where undeclared.count > filesOfUnknownVersion {
            // A file named for the version declaring another (copied from it, `version:` left as it was).
            let namesake = declaredByFile.keys.sorted().first { (($0 as NSString).lastPathComponent as NSString).deletingPathExtension == entry.name }
            let fix = namesake.map { "\($0) declares version '\(declaredByFile[$0] ?? "?")': correct its 'version:' if it is this version's file" }
            let unread = filesOfUnknownVersion > 0 ? " (unless it is the version of a schema file whose version cannot be read)" : ""
            diagnostics.append(.error("version '\(entry.name)' is listed, but no schema file declares it\(unread)", at: entry.location, length: entry.name.count,
                                      fix: fix ?? Suggestions.didYouMean(entry.name, in: files.keys) ?? "remove it, or add its schema file"))
        }
        // Where a version left out belongs: the list (its last entry), not the file's first line.
        let list = listed.last?.location ?? FileLocation(path: path, line: 1, column: 1)
        for (version, file) in files.sorted(by: { $0.key < $1.key }) where !names.contains(version) {
            diagnostics.append(.error("version '\(version)' (\(file)) is missing from the version order", at: list,
                                      fix: "add '\(version)' to 'versions:' where it belongs, oldest first"))
        }
        return diagnostics
    }

    /// Whether where the versions in error belong is unknown: a schema file with errors declares
    /// no version that can be read, or the version order file has errors.
    private var hasFileOfNoVersion = false
    /// How many schema files' versions cannot be read (the file cannot be, or its errors hide
    /// its `version:`): each may be any one version the order lists.
    private var schemaFilesOfUnknownVersion = 0
    /// The order of every version a file declares, those whose files have errors included; nil
    /// when it cannot be told (a file with errors names no version, or the names allow none).
    private var wholeOrder: [String]?

    /// The steps between neighbouring versions of the whole order whose files both load, each
    /// with the versions after its first (a mapping to any of them covers it): the history a
    /// catalog with errors can still be checked on, none next to a version whose file has errors.
    /// Nil when where such a file sits cannot be told.
    package var loadedSteps: [(from: Schema, to: Schema, later: Set<String>)]? {
        guard let whole = wholeOrder else { return nil }
        return whole.indices.dropLast().compactMap { index in
            guard let from = schema(version: whole[index]), let to = schema(version: whole[index + 1]) else { return nil }
            return (from, to, Set(whole[(index + 1)...]))
        }
    }

    /// The schemas oldest first, or an error when the folder declares no order and the names allow none.
    public func orderedSchemas() throws -> [Schema] {
        if let orderProblem { throw MapcError.input(orderProblem) }
        return schemas
    }

    /// The position of a version in the order (0 is the oldest).
    public func position(of version: String) throws -> Int {
        guard let index = try orderedSchemas().firstIndex(where: { $0.version == version }) else { throw notFound(version) }
        return index
    }

    /// The schema with that version name.
    public func schema(version: String) -> Schema? {
        schemas.first { $0.version == version }
    }

    /// The schema with that version name, or an error listing the known versions.
    public func require(version: String) throws -> Schema {
        if let schema = schema(version: version) { return schema }
        throw notFound(version)
    }

    private func notFound(_ version: String) -> MapcError {
        let known = schemas.map(\.version)
        var message = "unknown version '\(version)' in \(directory.isEmpty ? "the catalog" : directory)"
        message += known.isEmpty ? " (the folder has no schema files)" : " (known versions: \(known.joined(separator: ", ")))"
        // A close name is a slip of the keys only when its number is the same: another number is
        // another version, not a typo ('V5' is not a misspelt 'v1').
        let digits = { (name: String) in name.filter(\.isNumber) }
        if let suggestion = Suggestions.closest(to: version, in: known), digits(suggestion) == digits(version) { message += "; did you mean '\(suggestion)'?" }
        return MapcError.notFound(message)
    }

    /// The newest version, or an error when the folder has none or declares no order.
    public func newest() throws -> Schema {
        guard let last = try orderedSchemas().last else { throw MapcError.notFound("\(directory.isEmpty ? "the catalog" : directory) has no schema files") }
        return last
    }

    /// The versions strictly between two others, in the order from `older` to `newer` (used to
    /// follow rename chains); empty when the versions have no declared order.
    public func versions(between older: Schema, and newer: Schema) -> [Schema] {
        guard let ordered = try? orderedSchemas(), let start = ordered.firstIndex(where: { $0.version == older.version }),
              let end = ordered.firstIndex(where: { $0.version == newer.version }), abs(end - start) > 1 else { return [] }
        return start < end ? Array(ordered[(start + 1)..<end]) : Array(ordered[(end + 1)..<start].reversed())
    }

    /// A line describing the order: "v1 → v2 → v3 → v4 (declared in schemas/versions.yaml)".
    package var orderDescription: String {
        guard let order else { return orderProblem ?? "no versions" }
        return order.versions.joined(separator: " → ") + " (\(order.originDescription))"
    }
}
