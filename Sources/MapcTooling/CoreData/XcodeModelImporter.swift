import Foundation
import MapcFoundation
import MapcModel
import MapcMigration
import MapcStore

/// A Core Data model read from Xcode's files: its versions as schemas, oldest first.
public struct ImportedModel: Sendable {
    /// The model's name (the `.xcdatamodeld` folder's, without extension).
    public var name: String
    /// The versions, oldest first; the last is the current version.
    public var schemas: [Schema]
    /// The version `.xccurrentversion` names as current, when there is one.
    public var currentVersion: String?
    /// What could not be imported, or was imported differently, each naming the element.
    public var warnings: [Diagnostic]
    /// Why versions could not be imported (errors at their place in the model's files); the
    /// other versions are imported without them.
    public var failures: [Diagnostic] = []
    /// The versions that could not be imported, by name.
    public var failedVersions: [String] = []
}

/// Reads Xcode data models: a `.xcdatamodeld` folder (every version, ordered, the current one
/// last) or a single `.xcdatamodel` folder, or its `contents` file. Each version becomes a `Schema`
/// whose Core Data version hashes are the ones Core Data computes from the same model.
///
/// What mapc's schemas cannot hold (configurations, fetched properties, derived and composite
/// attributes, descending fetch indexes, `Object ID` attributes…) is reported as a warning naming
/// the element, never dropped silently; Xcode's editor and code-generation settings (`syncable`,
/// `usesScalarValueType`, `codeGenerationType`, diagram positions) have no meaning for stored data
/// and are skipped. Malformed XML is an error with its line and column.
public enum XcodeModelImporter {
    /// Reads a model at a path: `.xcdatamodeld`, `.xcdatamodel` or a `contents` file.
    public static func importModel(at path: String) throws -> ImportedModel {
        // Whole and absolute: `Kitchen 2.xcdatamodel` given from inside its bundle, or `.` from
        // inside a version, is named by the folders it is in.
        let url = Files.fileURL(path).absoluteURL.standardizedFileURL
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw MapcError.input("\(path) does not exist; give an .xcdatamodeld folder, an .xcdatamodel folder or its contents file")
        }
        switch url.pathExtension {
        case "xcdatamodeld" where isFolder.boolValue:
            return try importBundle(at: url)
        case "xcdatamodel" where isFolder.boolValue:
            let name = url.deletingPathExtension().lastPathComponent
            let (schema, warnings) = try importVersion(contents: url.appendingPathComponent("contents").path, model: modelName(of: url), version: name)
            return ImportedModel(name: schema.model, schemas: [schema], currentVersion: nil, warnings: warnings)
        default:
            if isFolder.boolValue, url.pathExtension == "momd" {
                throw MapcError.input("\(path) is a compiled Core Data model bundle (what Xcode builds into the app), not the model's source; import the .xcdatamodeld it is built from")
            }
            guard !isFolder.boolValue else {
                throw MapcError.input("\(path) is a folder but not an .xcdatamodeld or .xcdatamodel; give the model's folder")
            }
            let folder = url.deletingLastPathComponent()
            let version = folder.pathExtension == "xcdatamodel" ? folder.deletingPathExtension().lastPathComponent : url.deletingPathExtension().lastPathComponent
            let (schema, warnings) = try importVersion(contents: path, model: modelName(of: folder), version: version)
            return ImportedModel(name: schema.model, schemas: [schema], currentVersion: nil, warnings: warnings)
        }
    }

    /// Why a file given as a model's contents cannot be read, when it is a binary property list
    /// (one of Core Data's binary forms) rather than the XML Xcode writes; nil for anything else.
    private static func binaryModelProblem(at path: String) -> String? {
        // Only a regular file is looked into: opening a FIFO would wait for a writer (`Files.read` says what it is).
        guard Files.kind(of: Files.realPath(path)) == .regularFile, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 8), head == Data("bplist00".utf8) else { return nil }
        let name = Files.fileURL(path).lastPathComponent
        if name == "elements" {
            return "is Xcode 3's binary model format, which mapc does not read; open the model in a current Xcode and save it "
                + "(Xcode rewrites it as the XML 'contents' file it has written since Xcode 4), then import it again"
        }
        if name.hasSuffix(".mom") || name.hasSuffix(".omo") {
            return "is a compiled Core Data model (what Xcode builds into the app), not the model's source; import the .xcdatamodeld (or .xcdatamodel) it is built from"
        }
        return "is a binary property list, not the XML of an Xcode data model; import the .xcdatamodeld (or .xcdatamodel) folder"
    }

    /// The model's name: the enclosing `.xcdatamodeld`'s, or the version's own.
    private static func modelName(of versionFolder: URL) -> String {
        let parent = versionFolder.deletingLastPathComponent()
        return parent.pathExtension == "xcdatamodeld" ? parent.deletingPathExtension().lastPathComponent : versionFolder.deletingPathExtension().lastPathComponent
    }

    private static func importBundle(at url: URL) throws -> ImportedModel {
        let name = url.deletingPathExtension().lastPathComponent
        let entries = try FileManager.default.contentsOfDirectory(atPath: url.path)
        let versions = entries.filter { $0.hasSuffix(".xcdatamodel") }.map { String($0.dropLast(".xcdatamodel".count)) }
        guard !versions.isEmpty else {
            throw MapcError.input("\(url.path) holds no .xcdatamodel version; is it an Xcode data model?")
        }
        var warnings: [Diagnostic] = []
        var current: String?
        let currentFile = url.appendingPathComponent(".xccurrentversion")
        // Where the file names the current version (the value after `_XCCurrentVersionName` in
        // the XML Xcode writes), which its warnings point at; its start otherwise.
        var location = FileLocation(path: currentFile.path, line: 1, column: 1)
        if FileManager.default.fileExists(atPath: currentFile.path) {
            let data = try Files.read(currentFile.path, what: "the model's current version file")
            let text = SourceFile(path: currentFile.path, text: String(decoding: data, as: UTF8.self))
            if let key = text.text.range(of: "_XCCurrentVersionName") {
                let value = text.text[key.upperBound...].range(of: "<string>").map(\.upperBound) ?? key.lowerBound
                location = text.location(ofUTF8Offset: text.text.utf8.distance(from: text.text.utf8.startIndex, to: value))
            }
            let plist: Any?
            do { plist = try PropertyList.decode(data) } catch {
                throw MapcError.input("\(currentFile.path): \(error); open the model in Xcode and save it, or delete the file (the versions are then ordered by name)")
            }
            if let named = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String {
                let version = named.hasSuffix(".xcdatamodel") ? String(named.dropLast(".xcdatamodel".count)) : named
                if versions.contains(version) { current = version } else {
                    warnings.append(.warning("\(currentFile.path) names '\(named)' as the current version, which is not in the model; the versions are ordered by name", at: location))
                }
            } else {
                warnings.append(.warning("\(currentFile.path) names no current version; the versions are ordered by name", at: location))
            }
        }
        // Oldest first: by name, numbers compared as numbers ("Moody" < "Moody 2" < "Moody 10")
        // or, numbered in base 36, by the code's text ("09" < "0A"); the current version last,
        // as Xcode's is the newest.
        let natural = versions.sorted(by: VersionOrder.naturalOrder)
        var ordered = natural
        let base36 = VersionOrder.base36Order(versions)
        let checkTheOrder = "check the order in versions.yaml (oldest first, the current version last) and correct it there"
        if let base36, base36 != natural, let moved = base36.first(where: { base36.firstIndex(of: $0) != natural.firstIndex(of: $0) }) {
            warnings.append(.warning("the version names are numbered in base 36, which their numbers misorder ('\(moved)' would be read as another number); the versions are ordered by their text: \(base36.map { "'\($0)'" }.joined(separator: ", "))",
                                     at: FileLocation(path: url.path, line: 1, column: 1), fix: checkTheOrder))
            ordered = base36
        }
        let namesSayAnOrder = base36 != nil || VersionOrder.fromNames(versions) != nil
        if let current, ordered.last != current, namesSayAnOrder {
            // Numbered alike, a version numbered after the current one may be one in progress.
            let later = ordered.drop { $0 != current }.dropFirst()
            let names = later.map { "'\($0)'" }.joined(separator: ", ")
            let one = later.count == 1
            warnings.append(.warning("'\(current)' is the current version (.xccurrentversion) but \(names) \(one ? "sorts" : "sort") after it by name; it is ordered last, after \(one ? "it" : "them")",
                                     at: location,
                                     fix: "\(checkTheOrder); if \(names) \(one ? "is a version" : "are versions") in progress, not yet released, take \(one ? "it" : "them") out of versions.yaml and the schemas folder: older stores would migrate through \(one ? "it" : "them") to '\(current)'"))
            ordered.removeAll { $0 == current }
            ordered.append(current)
        } else if !namesSayAnOrder, versions.count > (current == nil ? 1 : 2) {
            // Named by what they did (`Original`, `Added Tags`): only the current version's place is known.
            if let current {
                ordered.removeAll { $0 == current }
                ordered.append(current)
            }
            warnings.append(.warning("the version names do not say their order (they are not numbered alike, as 'Model', 'Model 2', 'Model 3' are); they are ordered by name\(current == nil ? "" : ", the current version last"): \(ordered.map { "'\($0)'" }.joined(separator: ", "))",
                                     at: current == nil ? FileLocation(path: url.path, line: 1, column: 1) : location,
                                     fix: checkTheOrder + ": mapc migrates a store along it"))
        } else if let current, ordered.last != current {
            ordered.removeAll { $0 == current }
            ordered.append(current)
        }
        // One version that cannot be imported never stops the others.
        var schemas: [Schema] = [], failures: [Diagnostic] = [], failed: [String] = []
        for version in ordered {
            let contents = url.appendingPathComponent("\(version).xcdatamodel/contents").path
            do {
                let (schema, found) = try importVersion(contents: contents, model: name, version: version)
                schemas.append(schema)
                warnings += found
            } catch {
                failed.append(version)
                switch error {
                case let error as DiagnosticsError: failures += error.diagnostics
                default:
                    // At the file, when there is one (a folder of Xcode 3's format has none; its message names the folder).
                    let place = Files.kind(of: contents) == .regularFile ? FileLocation(path: contents, line: 1, column: 1) : nil
                    failures.append(.error("version '\(version)' is not imported: \(error)", at: place))
                }
            }
        }
        var model = ImportedModel(name: name, schemas: schemas, currentVersion: failed.contains(current ?? "") ? nil : current, warnings: warnings)
        model.failures = failures
        model.failedVersions = failed
        return model
    }

    // MARK: One version

    /// Reads one version's `contents` file.
    static func importVersion(contents path: String, model: String, version: String) throws -> (Schema, [Diagnostic]) {
        guard FileManager.default.fileExists(atPath: path) else {
            let folder = Files.parentFolder(of: path)
            if FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("elements")) {
                throw MapcError.input("\(folder) is in Xcode 3's binary model format (an 'elements' file, no 'contents'), which mapc does not read; "
                    + "open the model in a current Xcode and save it (Xcode rewrites it as the XML 'contents' file it has written since Xcode 4), then import it again")
            }
            throw MapcError.input("\(path) does not exist; an .xcdatamodel folder holds its model in a file named contents")
        }
        if let problem = binaryModelProblem(at: path) { throw MapcError.input("\(path) \(problem)") }
        let root = try XMLTree.read(path: path)
        guard root.name == "model" else {
            throw MapcError.input("\(path):\(root.location.line):\(root.location.column): the root element is <\(root.name)>, not <model>; this is not an Xcode data model")
        }
        var reader = ModelReader(path: path)
        var schema = Schema(model: model, version: version, entities: root.children(named: "entity").compactMap { reader.entity($0) })
        reader.leaveOutToManyIndexElements(of: &schema)
        let identifier = root.attributes["userDefinedModelVersionIdentifier"] ?? ""
        schema.versionIdentifier = identifier.isEmpty ? nil : identifier
        for child in root.children where !["entity", "elements"].contains(child.name) {
            switch child.name {
            case "configuration":
                reader.warn("configuration '\(child.attributes["name"] ?? "")' is not imported: mapc stores every entity in one store", at: child)
            case "fetchRequest":
                reader.warn("fetch request template '\(child.attributes["name"] ?? "")' is not imported: mapc has no fetch request templates", at: child)
            case "composite":
                reader.warn("composite '\(child.attributes["name"] ?? "")' is not imported: mapc has no composite attributes (each attribute of this type is said where it stands)", at: child)
            default:
                reader.warn("<\(child.name)> is not imported", at: child)
            }
        }
        // Checked as a schema file is, at the model's own lines: what Core Data accepts and mapc
        // cannot hold is said here, not in a file mapc has not written.
        var validator = SchemaValidator(schema: schema, document: nil)
        let found = validator.validate()
        let errors = reader.errors + found.filter { $0.severity == .error }
        if !errors.isEmpty { throw DiagnosticsError(errors) }
        // Names a schema file cannot hold, each at its own element (Xcode's editor refuses them too).
        var names: [Diagnostic] = []
        for entity in schema.entities {
            let fix = "Xcode's model editor does not accept it either: rename it in the model (an ASCII letter, then ASCII letters, digits or '_')"
            if !YAMLDocument.isIdentifier(entity.name) { names.append(.error("entity name '\(entity.name)' is not a valid name", at: entity.location, fix: fix)) }
            if let problem = YAMLDocument.nameLengthProblem(entity.name) { names.append(.error("entity name \(problem)", at: entity.location, fix: "shorten it in the model")) }
            for (kind, name, location) in entity.attributes.map({ ("attribute", $0.name, $0.location) }) + entity.relationships.map({ ("relationship", $0.name, $0.location) }) {
                if !YAMLDocument.isIdentifier(name) {
                    names.append(.error("\(kind) name '\(name)' of \(entity.name) is not a valid name", at: location ?? entity.location, fix: fix))
                } else if let problem = YAMLDocument.nameLengthProblem(name) {
                    names.append(.error("\(kind) name \(problem)", at: location ?? entity.location, fix: "shorten it in the model"))
                }
            }
        }
        if !names.isEmpty { throw DiagnosticsError(names) }
        // A version SQLite could not store (a hierarchy's table past its columns) is said as
        // `check` says it, not as a file mapc fails to read back.
        let storage = StoreFormat.storageDiagnostics(of: schema, in: path)
        if !storage.isEmpty { throw DiagnosticsError(storage) }
        // What was imported must read back as written: a version that would not is left out here,
        // as one with errors is, at its contents (a failure is mapc's, said before any file is written).
        let problems = ImportedModel.readBack(schema, text: ImportedModel.schemaText(schema, source: model), contents: path).problems
        if !problems.isEmpty { throw DiagnosticsError(problems) }
        return (schema, reader.warnings + found.filter { $0.severity != .error })
    }
}

extension ImportedModel {
    /// A version's schema file read back as written (what was imported must read back): the
    /// schema, and its errors said at the version's `contents`, each saying whose it is to mend
    /// (the version's name, a name Xcode refuses too, or mapc's, to hear about).
    static func readBack(_ schema: Schema, text: String, contents path: String) -> (schema: Schema?, problems: [Diagnostic]) {
        let (loaded, diagnostics) = SchemaLoader.parse(source: SourceFile(path: "\(schema.version).yaml", text: text))
        let contents = schema.entities.lazy.compactMap(\.location).first ?? FileLocation(path: path, line: 1, column: 1)
        let problems = diagnostics.filter { $0.severity == .error }.map { problem -> Diagnostic in
            // A version's name is the model's file name, which mapc's files hold fewer of.
            if problem.message.contains("is not a valid version name") {
                return .error("version '\(schema.version)' cannot be a version of mapc's: \(problem.message)", at: FileLocation(path: path, line: 1, column: 1),
                              fix: "rename the version in Xcode (a version's name is not part of its hashes): " + (problem.fix ?? ""))
            }
            let whose = problem.message.contains("is not a valid name") ? "Xcode's model editor does not accept it either: rename it in the model" : "please report it with the model"
            return .error("version '\(schema.version)' cannot be written as a schema file mapc reads back: \(problem.message); \(whose)", at: contents)
        }
        return (loaded, problems)
    }

    /// A version's schema file as `mapc import` writes it.
    static func schemaText(_ schema: Schema, source: String) -> String {
        SchemaWriter.yaml(schema, header: ["Imported by mapc from \(source), version '\(schema.version)'.",
                                           "Edit the Xcode model and import again, or edit this file and keep it as the model's version."],
                          jsonSchema: EditorSchemas.schemaFileName)
    }

    /// The files `mapc import` writes for the model: one schema file per version, named after it,
    /// and `versions.yaml` with their order. Each text is read back with `SchemaLoader` first (the
    /// importer left out a version that would not): one that does not load throws
    /// `DiagnosticsError` naming it, so nothing partial is written.
    public func schemaFiles(source: String) throws -> [(name: String, text: String)] {
        var files: [(String, String)] = []
        var problems: [Diagnostic] = []
        // The version order's file is mapc's; compared without case, as macOS's file systems do.
        if let reserved = schemas.first(where: { "\($0.version).yaml".lowercased() == VersionOrder.fileName.lowercased() }) {
            throw MapcError.input("\(name): version '\(reserved.version)' would be written to \(reserved.version).yaml, which is the file of the version order (\(VersionOrder.fileName)); rename the version in Xcode (a version's name is not part of its hashes) and import again; nothing was written")
        }
        for schema in schemas {
            let name = "\(schema.version).yaml"
            let text = Self.schemaText(schema, source: source)
            // Checked again as written (said at the version's contents rather than in a file that was never written).
            let (loaded, found) = Self.readBack(schema, text: text, contents: "\(schema.version).xcdatamodel/contents")
            problems += found
            if loaded != nil { files.append((name, text)) }
        }
        if !problems.isEmpty { throw DiagnosticsError(problems) }
        let order = schemas.map { YAMLText.flowScalar($0.version) }.joined(separator: ", ")
        files.append(("versions.yaml", EditorSchemas.modeline(EditorSchemas.versionsFileName) + "\n# " + YAMLText.comment("The versions of \(name), oldest first; the last is the current version\(currentVersion.map { " (\($0), as .xccurrentversion says)" } ?? "").") + "\nversions: [\(order)]\n"))
        return files + EditorSchemas.files(for: .schema) + EditorSchemas.files(for: .versionOrder)
    }
}
