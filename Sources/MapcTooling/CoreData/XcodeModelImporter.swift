import Foundation
import MapcFoundation
import MapcModel
import MapcMigration

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
        let url = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw MapcError.notFound("\(path) does not exist; give an .xcdatamodeld folder, an .xcdatamodel folder or its contents file")
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
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 8), head == Data("bplist00".utf8) else { return nil }
        let name = URL(fileURLWithPath: path).lastPathComponent
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
        if FileManager.default.fileExists(atPath: currentFile.path) {
            let data = try Files.read(currentFile.path, what: "the model's current version file")
            let plist: Any?
            do { plist = try PropertyList.decode(data) } catch {
                throw MapcError.input("\(currentFile.path): \(error); open the model in Xcode and save it, or delete the file (the versions are then ordered by name)")
            }
            if let named = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String {
                let version = named.hasSuffix(".xcdatamodel") ? String(named.dropLast(".xcdatamodel".count)) : named
                if versions.contains(version) { current = version } else {
                    warnings.append(.warning("\(currentFile.path) names '\(named)' as the current version, which is not in the model; the versions are ordered by name",
                                             at: FileLocation(path: currentFile.path, line: 1, column: 1)))
                }
            } else {
                warnings.append(.warning("\(currentFile.path) names no current version; the versions are ordered by name",
                                         at: FileLocation(path: currentFile.path, line: 1, column: 1)))
            }
        }
        // Oldest first: by name, numbers compared as numbers ("Moody" < "Moody 2" < "Moody 10"),
        // the current version last, as Xcode's is the newest.
        var ordered = versions.sorted(by: VersionOrder.naturalOrder)
        if let current, ordered.last != current {
            let later = ordered.drop { $0 != current }.dropFirst()
            warnings.append(.warning("'\(current)' is the current version (.xccurrentversion) but \(later.map { "'\($0)'" }.joined(separator: ", ")) sort after it by name; it is ordered last",
                                     at: FileLocation(path: currentFile.path, line: 1, column: 1)))
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
                default: failures.append(.error("version '\(version)' is not imported: \(error)", at: FileLocation(path: contents, line: 1, column: 1)))
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
        let identifier = root.attributes["userDefinedModelVersionIdentifier"] ?? ""
        schema.versionIdentifier = identifier.isEmpty ? nil : identifier
        for child in root.children where !["entity", "elements"].contains(child.name) {
            switch child.name {
            case "configuration":
                reader.warn("configuration '\(child.attributes["name"] ?? "")' is not imported: mapc stores every entity in one store", at: child)
            case "fetchRequest":
                reader.warn("fetch request template '\(child.attributes["name"] ?? "")' is not imported: mapc has no fetch request templates", at: child)
            case "compositeAttribute":
                reader.warn("composite attribute '\(child.attributes["name"] ?? "")' is not imported: mapc has no composite attributes", at: child)
            default:
                reader.warn("<\(child.name)> is not imported", at: child)
            }
        }
        // Checked as a schema file is, at the model's own lines: what Core Data accepts and mapc
        // cannot hold is said here, not in a file mapc has not written.
        var validator = SchemaValidator(schema: schema, document: nil)
        let found = validator.validate()
        let errors = found.filter { $0.severity == .error }
        if !errors.isEmpty { throw DiagnosticsError(errors) }
        return (schema, reader.warnings + found.filter { $0.severity != .error })
    }

    /// Turns `<entity>` elements into entities, collecting warnings.
    private struct ModelReader {
        let path: String
        var warnings: [Diagnostic] = []

        /// XML attributes with no meaning for stored data: editor, code generation and sync settings.
        static let ignored: Set<String> = ["syncable", "usesScalarValueType", "codeGenerationType", "positionX", "positionY", "width", "height",
                                           "spotlightIndexingEnabled", "allowsCloudEncryption", "deletionRule", "inverseEntity"]

        init(path: String) { self.path = path }

        mutating func warn(_ message: String, at node: XMLNode) {
            warnings.append(.warning(message, at: node.location))
        }

        private mutating func reportUnknown(_ node: XMLNode, known: Set<String>, what: String) {
            for name in node.attributes.keys.sorted() where !known.contains(name) && !Self.ignored.contains(name) {
                warn("\(what): the setting \(name)=\"\(node.attributes[name] ?? "")\" is not imported", at: node)
            }
        }

        private func flag(_ node: XMLNode, _ name: String) -> Bool {
            ["YES", "yes", "true", "1"].contains(node.attributes[name] ?? "")
        }

        private func nonEmpty(_ node: XMLNode, _ name: String) -> String? {
            node.attributes[name].flatMap { $0.isEmpty ? nil : $0 }
        }

        mutating func entity(_ node: XMLNode) -> Entity? {
            guard let name = nonEmpty(node, "name") else {
                warn("an entity without a name is not imported", at: node)
                return nil
            }
            reportUnknown(node, known: ["name", "representedClassName", "parentEntity", "isAbstract", "elementID", "versionHashModifier"], what: "entity \(name)")
            var entity = Entity(name: name, parent: nonEmpty(node, "parentEntity"), isAbstract: flag(node, "isAbstract"))
            entity.className = nonEmpty(node, "representedClassName")
            entity.renamingIdentifier = nonEmpty(node, "elementID")
            entity.versionHashModifier = nonEmpty(node, "versionHashModifier")
            entity.location = node.location
            for child in node.children {
                switch child.name {
                case "attribute":
                    if let attribute = attribute(child, entity: name) {
                        if flag(child, "indexed") { entity.indexes.append(Index(name: "\(attribute.name)Index", properties: [attribute.name])) }
                        entity.attributes.append(attribute)
                    }
                case "relationship":
                    if let relationship = relationship(child, entity: name) { entity.relationships.append(relationship) }
                case "fetchedProperty":
                    warn("fetched property \(name).\(child.attributes["name"] ?? "") is not imported: fetched properties are queries, not stored data", at: child)
                case "uniquenessConstraints":
                    for constraint in child.children(named: "uniquenessConstraint") {
                        let names = constraint.children(named: "constraint").compactMap { nonEmpty($0, "value") }
                        if !names.isEmpty { entity.uniquenessConstraints.append(names) }
                    }
                case "fetchIndex":
                    let indexName = nonEmpty(child, "name") ?? "index\(entity.indexes.count + 1)"
                    var properties: [String] = []
                    for element in child.children(named: "fetchIndexElement") {
                        if let property = nonEmpty(element, "property") {
                            properties.append(property)
                        } else {
                            warn("fetch index \(name).\(indexName): an element on an expression is not imported (mapc indexes properties)", at: element)
                        }
                        if (element.attributes["type"] ?? "Binary") != "Binary" {
                            warn("fetch index \(name).\(indexName): the \(element.attributes["type"] ?? "") index type is not kept; mapc makes an ordinary index", at: element)
                        }
                        if element.attributes["order"] == "descending" {
                            warn("fetch index \(name).\(indexName): descending order on '\(element.attributes["property"] ?? "")' is not kept; SQLite reads an ascending index both ways", at: element)
                        }
                    }
                    if !properties.isEmpty { entity.indexes.append(Index(name: indexName, properties: properties)) }
                case "compoundIndexes":
                    for compound in child.children(named: "compoundIndex") {
                        let properties = compound.children(named: "index").compactMap { nonEmpty($0, "value") }
                        if !properties.isEmpty { entity.indexes.append(Index(name: properties.joined(separator: "_"), properties: properties)) }
                    }
                case "userInfo":
                    entity.userInfo = userInfo(child)
                default:
                    warn("<\(child.name)> in entity \(name) is not imported", at: child)
                }
            }
            return entity
        }

        private func userInfo(_ node: XMLNode) -> [String: String] {
            var info: [String: String] = [:]
            for entry in node.children(named: "entry") {
                if let key = entry.attributes["key"] { info[key] = entry.attributes["value"] ?? "" }
            }
            return info
        }

        static let types: [String: AttributeType] = [
            "Integer 16": .int16, "Integer 32": .int32, "Integer 64": .int64, "Decimal": .decimal, "Double": .double, "Float": .float,
            "String": .string, "Boolean": .bool, "Date": .date, "Binary": .binary, "UUID": .uuid, "URI": .uri, "Transformable": .transformable,
        ]

        mutating func attribute(_ node: XMLNode, entity: String) -> Attribute? {
            guard let name = nonEmpty(node, "name") else {
                warn("an attribute of \(entity) without a name is not imported", at: node)
                return nil
            }
            let what = "attribute \(entity).\(name)"
            let typeName = node.attributes["attributeType"] ?? "Undefined"
            guard let type = Self.types[typeName] else {
                switch typeName {
                case "Object ID": warn("\(what) (Object ID) is not imported: object IDs are not stored values", at: node)
                case "Undefined": warn("\(what) has no type (Undefined) and is not imported; Core Data allows it only on transient attributes", at: node)
                case "Composite": warn("\(what) is a composite attribute and is not imported: mapc has no composite attributes", at: node)
                default: warn("\(what) has the unknown type '\(typeName)' and is not imported", at: node)
                }
                return nil
            }
            reportUnknown(node, known: ["name", "attributeType", "optional", "transient", "indexed", "defaultValueString", "defaultDateTimeInterval",
                                        "minValueString", "maxValueString", "regularExpressionString", "valueTransformerName", "customClassName",
                                        "elementID", "versionHashModifier", "allowsExternalBinaryDataStorage", "preserveAfterDeletion",
                                        "derived", "derivationExpression", "minDateTimeInterval", "maxDateTimeInterval"], what: what)
            var attribute = Attribute(name: name, type: type, isOptional: flag(node, "optional"))
            attribute.location = node.location
            attribute.isTransient = flag(node, "transient")
            attribute.renamingIdentifier = nonEmpty(node, "elementID")
            attribute.versionHashModifier = nonEmpty(node, "versionHashModifier")
            attribute.allowsExternalStorage = flag(node, "allowsExternalBinaryDataStorage")
            attribute.preservesAfterDeletion = flag(node, "preserveAfterDeletion")
            if type == .transformable {
                attribute.valueTransformer = nonEmpty(node, "valueTransformerName")
                attribute.className = nonEmpty(node, "customClassName")
            } else if let className = nonEmpty(node, "customClassName") {
                warn("\(what): the custom class '\(className)' is not kept (it applies to transformable attributes)", at: node)
            }
            if flag(node, "derived") {
                warn("\(what) is derived (\(node.attributes["derivationExpression"] ?? "")): imported as a stored attribute, its derivation is not kept", at: node)
            }
            if type == .date {
                if let seconds = nonEmpty(node, "defaultDateTimeInterval") {
                    if let interval = Double(seconds), interval.isFinite {
                        attribute.defaultValue = .date(Date(timeIntervalSinceReferenceDate: interval))
                    } else {
                        warn("\(what): the default date '\(seconds)' is not a number of seconds and is not imported", at: node)
                    }
                }
                for (key, bound) in [("minDateTimeInterval", 0), ("maxDateTimeInterval", 1)] {
                    guard let text = nonEmpty(node, key) else { continue }
                    guard let interval = Double(text), interval.isFinite else {
                        warn("\(what): \(key) '\(text)' is not a number of seconds and is not imported", at: node)
                        continue
                    }
                    if bound == 0 { attribute.validation.min = .date(Date(timeIntervalSinceReferenceDate: interval)) } else { attribute.validation.max = .date(Date(timeIntervalSinceReferenceDate: interval)) }
                }
            } else if let text = node.attributes["defaultValueString"] {
                if let value = defaultValue(text, type: type) {
                    attribute.defaultValue = value
                } else {
                    warn("\(what): the default '\(text)' is not \(English.withArticle(type.rawValue)) and is not imported", at: node)
                }
            }
            // Bounds: values for numbers, lengths for strings.
            for (key, isMin) in [("minValueString", true), ("maxValueString", false)] {
                guard let text = nonEmpty(node, key) else { continue }
                switch type {
                case .string, .uri:
                    guard let length = Int(text), length >= 0 else {
                        warn("\(what): \(key) '\(text)' is not a length and is not imported", at: node)
                        continue
                    }
                    if isMin { attribute.validation.minLength = length } else { attribute.validation.maxLength = length }
                case .int16, .int32, .int64, .decimal, .double, .float:
                    guard let value = defaultValue(text, type: type) else {
                        warn("\(what): \(key) '\(text)' is not a number and is not imported", at: node)
                        continue
                    }
                    if isMin { attribute.validation.min = value } else { attribute.validation.max = value }
                default:
                    warn("\(what): \(key) on a \(type.rawValue) attribute is not imported", at: node)
                }
            }
            if let regex = nonEmpty(node, "regularExpressionString") {
                if type == .string { attribute.validation.regex = regex } else {
                    warn("\(what): a regular expression on a \(type.rawValue) attribute is not imported", at: node)
                }
            }
            for child in node.children {
                if child.name == "userInfo" { attribute.userInfo = userInfo(child) } else { warn("<\(child.name)> in \(what) is not imported", at: child) }
            }
            return attribute
        }

        /// A default value or bound written by Xcode's editor, read for the attribute's type.
        private func defaultValue(_ text: String, type: AttributeType) -> Value? {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            switch type {
            case .int16, .int32, .int64:
                if let number = Int64(trimmed) { return ValueRules.coerce(.integer(number), to: type).value }
                if let number = Double(trimmed), number.rounded() == number { return ValueRules.coerce(.double(number), to: type).value }
                return nil
            case .double, .float:
                return Double(trimmed).flatMap { $0.isFinite ? .double($0) : nil }
            case .decimal:
                return ValueParser.parseDecimal(trimmed).map(Value.decimal)
            case .bool:
                switch trimmed.uppercased() {
                case "YES", "TRUE", "1": return .bool(true)
                case "NO", "FALSE", "0": return .bool(false)
                default: return nil
                }
            case .string: return .string(text)
            case .uuid: return UUID(uuidString: trimmed).map(Value.uuid)
            case .uri: return trimmed.isEmpty ? nil : .uri(trimmed)
            case .date, .binary, .transformable: return nil
            }
        }

        static let deleteRules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]

        mutating func relationship(_ node: XMLNode, entity: String) -> Relationship? {
            guard let name = nonEmpty(node, "name") else {
                warn("a relationship of \(entity) without a name is not imported", at: node)
                return nil
            }
            let what = "relationship \(entity).\(name)"
            guard let destination = nonEmpty(node, "destinationEntity") else {
                warn("\(what) has no destination entity and is not imported", at: node)
                return nil
            }
            reportUnknown(node, known: ["name", "destinationEntity", "inverseName", "optional", "toMany", "ordered", "minCount", "maxCount",
                                        "transient", "elementID", "versionHashModifier"], what: what)
            var relationship = Relationship(name: name, destination: destination, isToMany: flag(node, "toMany"), isOrdered: flag(node, "ordered"),
                                            inverse: nonEmpty(node, "inverseName"), isOptional: flag(node, "optional"))
            relationship.location = node.location
            relationship.isTransient = flag(node, "transient")
            relationship.renamingIdentifier = nonEmpty(node, "elementID")
            relationship.versionHashModifier = nonEmpty(node, "versionHashModifier")
            let rule = node.attributes["deletionRule"] ?? "Nullify"
            if let known = Self.deleteRules[rule] { relationship.deleteRule = known } else {
                warn("\(what): the delete rule '\(rule)' is unknown; nullify is used", at: node)
            }
            // The counts Core Data hashes, whatever the relationship's kind (Xcode writes
            // minCount="1" maxCount="1" on to-ones); the defaults (0, and a to-one's 1) are left out.
            for (key, isMin) in [("minCount", true), ("maxCount", false)] {
                guard let text = nonEmpty(node, key) else { continue }
                guard let count = Int(text), count >= 0 else {
                    warn("\(what): \(key) '\(text)' is not a count and is not imported", at: node)
                    continue
                }
                if count == 0 || (!relationship.isToMany && !isMin && count == 1) { continue }
                if !relationship.isToMany && count > 1 {
                    warn("\(what): \(key) \(count) on a to-one relationship is not imported (a to-one holds one object)", at: node)
                    continue
                }
                if isMin { relationship.minCount = count } else { relationship.maxCount = count }
            }
            if !relationship.isToMany && relationship.isOrdered {
                warn("\(what): 'ordered' on a to-one relationship is not imported", at: node)
                relationship.isOrdered = false
            }
            for child in node.children {
                if child.name == "userInfo" { relationship.userInfo = userInfo(child) } else { warn("<\(child.name)> in \(what) is not imported", at: child) }
            }
            return relationship
        }
    }
}

private extension Result {
    var value: Success? { try? get() }
}

extension ImportedModel {
    /// The files `mapc import` writes for the model: one schema file per version, named after it,
    /// and `versions.yaml` with their order. Each text is read back with `SchemaLoader` first:
    /// a version that would not load (a model mapc's schemas cannot express) throws
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
            let text = SchemaWriter.yaml(schema, header: ["Imported by mapc from \(source), version '\(schema.version)'.",
                                                          "Edit the Xcode model and import again, or edit this file and keep it as the model's version."],
                                         jsonSchema: EditorSchemas.schemaFileName)
            // Checked again as written: what was imported must read back (a failure is mapc's, said
            // at the version's contents rather than in a file that was never written).
            let (loaded, diagnostics) = SchemaLoader.parse(source: SourceFile(path: name, text: text))
            let contents = schema.entities.lazy.compactMap(\.location).first ?? FileLocation(path: "\(schema.version).xcdatamodel/contents", line: 1, column: 1)
            problems += diagnostics.filter { $0.severity == .error }.map {
                .error("version '\(schema.version)' cannot be written as a schema file mapc reads back: \($0.message); please report it with the model", at: contents)
            }
            if loaded != nil { files.append((name, text)) }
        }
        if !problems.isEmpty { throw DiagnosticsError(problems) }
        let order = schemas.map { YAMLText.flowScalar($0.version) }.joined(separator: ", ")
        files.append(("versions.yaml", EditorSchemas.modeline(EditorSchemas.versionsFileName) + "\n# The versions of \(name), oldest first; the last is the current version\(currentVersion.map { " (\($0), as .xccurrentversion says)" } ?? "").\nversions: [\(order)]\n"))
        return files + EditorSchemas.files(for: .schema) + EditorSchemas.files(for: .versionOrder)
    }
}
