import Foundation
internal import Yams
import MapcFoundation

/// Reads schema files (one model version per file) into `Schema` values.
///
/// Loading reports every problem in the file at once: structural problems (unknown keys, values
/// of the wrong kind) while reading, then semantic ones (`SchemaValidator`) once the whole file
/// is read. Each diagnostic carries `file:line:col`.
public enum SchemaLoader {
    /// Limits that keep hostile files bounded.
    package static let maxEntities = 10_000
    /// Limit on properties per entity.
    package static let maxPropertiesPerEntity = 2_000

    /// Why an entity of `count` attributes is refused.
    package static func tooManyAttributes(_ count: Int) -> String {
        "too many attributes (\(count)); an entity has at most \(maxPropertiesPerEntity), as a store's table holds at most \(maxPropertiesPerEntity) columns (SQLite's limit)"
    }

    package static let topKeys = ["model", "version", "versionIdentifier", "entities"]
    package static let entityKeys = ["parent", "abstract", "renamingIdentifier", "versionHashModifier",
                             "uniquenessConstraints", "indexes", "userInfo", "className", "notImported", "attributes", "relationships"]
    package static let attributeKeys = ["type", "optional", "default", "transient", "renamingIdentifier", "versionHashModifier",
                                "valueTransformer", "className", "min", "max", "minLength", "maxLength", "regex", "userInfo", "externalStorage", "preserveAfterDeletion", "derivation"]
    package static let relationshipKeys = ["destination", "toMany", "ordered", "inverse", "deleteRule", "optional", "minCount",
                                   "maxCount", "renamingIdentifier", "versionHashModifier", "transient", "userInfo"]

    /// Spellings accepted for attribute types besides the canonical ones (Core Data's editor names).
    package static let typeAliases: [String: AttributeType] = [
        "integer16": .int16, "integer 16": .int16, "integer32": .int32, "integer 32": .int32,
        "integer64": .int64, "integer 64": .int64, "boolean": .bool, "binarydata": .binary, "binary data": .binary,
        "data": .binary, "url": .uri,
    ]

    /// Loads and validates a schema file. Throws `DiagnosticsError` carrying every error (and
    /// warning) when the file has errors; returns the schema and its warnings otherwise.
    public static func load(path: String) throws -> (schema: Schema, warnings: [Diagnostic]) {
        try load(source: SourceFile.read(path: path))
    }

    /// Loads and validates schema text.
    public static func load(source: SourceFile) throws -> (schema: Schema, warnings: [Diagnostic]) {
        let (schema, diagnostics) = parse(source: source)
        guard let schema, !diagnostics.hasErrors else { throw DiagnosticsError(diagnostics) }
        return (schema, diagnostics)
    }

    /// Reads schema text, returning whatever could be read and all diagnostics; never throws.
    public static func parse(source: SourceFile) -> (schema: Schema?, diagnostics: [Diagnostic]) {
        parse(document: YAMLDocument(source: source), source: source)
    }

    /// The same, of a file already read as YAML.
    package static func parse(document read: YAMLDocument, source: SourceFile) -> (schema: Schema?, diagnostics: [Diagnostic]) {
        var document = read
        guard let root = document.root else { return (nil, document.diagnostics) }
        guard let top = document.entries(of: root, what: "a schema file") else { return (nil, document.diagnostics) }
        document.rejectUnknownKeys(top, allowed: topKeys, in: "the schema file")

        var versionIdentifier: String?
        var model: String?
        var version: String?
        var entities: [Entity] = []
        for entry in top {
            switch entry.key {
            case "model": model = document.string(entry.value, what: "model")
            case "versionIdentifier": versionIdentifier = document.string(entry.value, what: "versionIdentifier")
            case "version":
                version = document.string(entry.value, what: "version")
                if let text = version, !isVersionName(text) {
                    document.error("version '\(text)' is not a valid version name", at: entry.value,
                                   fix: "use letters, digits, spaces inside and punctuation other than / \\ : * ? \" < > | @, such as v3, 2.1 or Moody 2 (at most 64 characters)")
                }
            case "entities":
                guard let items = document.entries(of: entry.value, what: "entities") else { break }
                if items.count > maxEntities {
                    document.error("too many entities (\(items.count)); the limit is \(maxEntities)", at: entry.value)
                    break
                }
                for item in items {
                    if let entity = readEntity(item, in: &document) { entities.append(entity) }
                }
            default: break
            }
        }
        let start = FileLocation(path: source.path, line: 1, column: 1)
        if !top.contains(where: { $0.key == "model" }) {
            document.diagnostics.append(.error("missing 'model:', the model's name", at: start, fix: "add a line such as 'model: UnCloudNotes'"))
        }
        if !top.contains(where: { $0.key == "version" }) {
            document.diagnostics.append(.error("missing 'version:', this version's name", at: start, fix: "add a line such as 'version: v1'"))
        }
        if !top.contains(where: { $0.key == "entities" }) {
            document.diagnostics.append(.error("missing 'entities:'", at: start, fix: "list the model's entities under 'entities:'"))
        }
        var schema = Schema(model: model ?? "", version: version ?? "", entities: entities, source: source)
        schema.versionIdentifier = versionIdentifier
        var diagnostics = document.diagnostics
        var validator = SchemaValidator(schema: schema, document: document)
        diagnostics += validator.validate()
        return (schema, diagnostics.sorted(by: Self.fileOrder))
    }

    package static func fileOrder(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        let left = a.location.map { ($0.line, $0.column) } ?? (0, 0)
        let right = b.location.map { ($0.line, $0.column) } ?? (0, 0)
        return left < right
    }

    /// Letters, digits, '.', '_', '-' and inner spaces (Xcode names versions "Moody 2").
    static func isVersionName(_ text: String) -> Bool {
        // A version names a file (schemas/<version>.yaml), and Xcode's are file names ("Moody 2",
        // "Model 7 (1)", "Modèle"): anything a file name holds on every system, with no space at
        // either end, and no '@' (a test's expected file is <fixture>@<version>.json).
        !text.isEmpty && text.count <= 64 && text != "." && text != ".." && !text.hasPrefix(" ") && !text.hasSuffix(" ") && text.unicodeScalars.allSatisfy {
            // No control or format character (a bidirectional override would show the name as another), no tab or other space than ' '.
            !versionNameForbidden.contains($0) && ![.control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse].contains($0.properties.generalCategory)
                && !($0.properties.isWhitespace && $0 != " ")
        }
    }

    /// Characters a version name may not hold: a path's separators and what file systems refuse.
    static let versionNameForbidden: Set<Unicode.Scalar> = ["/", "\\", ":", "*", "?", "\"", "<", ">", "|", "@"]

    // MARK: Entities

    static func readEntity(_ item: (key: String, keyNode: Node, value: Node), in document: inout YAMLDocument) -> Entity? {
        guard let name = document.identifier(item.keyNode, what: "entity name") else { return nil }
        var entity = Entity(name: name)
        entity.location = document.location(of: item.keyNode)
        if YAMLDocument.isNull(item.value) { return entity }
        guard let entries = document.entries(of: item.value, what: "entity '\(name)'") else { return entity }
        document.rejectUnknownKeys(entries, allowed: entityKeys, in: "entity '\(name)'")
        for entry in entries {
            let value = entry.value
            switch entry.key {
            case "parent": entity.parent = document.identifier(value, what: "parent")
            case "abstract": entity.isAbstract = document.bool(value, what: "abstract") ?? false
            case "renamingIdentifier": entity.renamingIdentifier = document.string(value, what: "renamingIdentifier")
            case "className": entity.className = document.string(value, what: "className")
            case "versionHashModifier": entity.versionHashModifier = document.string(value, what: "versionHashModifier")
            case "userInfo": entity.userInfo = document.stringMap(value, what: "userInfo")
            case "notImported": entity.notImported = document.items(of: value, what: "notImported")?.compactMap { document.string($0, what: "notImported") } ?? []
            case "uniquenessConstraints":
                entity.uniquenessConstraints = readNameLists(value, what: "uniquenessConstraints", in: &document)
            case "indexes":
                entity.indexes = readIndexes(value, entity: name, in: &document)
            case "attributes":
                guard let items = document.entries(of: value, what: "attributes of '\(name)'") else { break }
                if items.count > maxPropertiesPerEntity {
                    document.error(Self.tooManyAttributes(items.count), at: value)
                    break
                }
                for item in items {
                    if let attribute = readAttribute(item, entity: name, in: &document) { entity.attributes.append(attribute) }
                }
            case "relationships":
                guard let items = document.entries(of: value, what: "relationships of '\(name)'") else { break }
                if items.count > maxPropertiesPerEntity {
                    document.error("too many relationships (\(items.count)); the limit is \(maxPropertiesPerEntity)", at: value)
                    break
                }
                for item in items {
                    if let relationship = readRelationship(item, entity: name, in: &document) { entity.relationships.append(relationship) }
                }
            default: break
            }
        }
        return entity
    }

    /// `[[a, b], [c]]`, or `[a, b]` as a single list.
    static func readNameLists(_ node: Node, what: String, in document: inout YAMLDocument) -> [[String]] {
        guard let items = document.items(of: node, what: what) else { return [] }
        if items.allSatisfy({ $0.scalar != nil }) {
            return [items.compactMap { document.identifier($0, what: "property name") }]
        }
        return items.compactMap { item in
            if item.scalar != nil { return document.identifier(item, what: "property name").map { [$0] } }
            return document.items(of: item, what: "a constraint")?.compactMap { document.identifier($0, what: "property name") }
        }
    }

    /// Indexes: `{name: byTitle, properties: [title, dateCreated]}`, `[title, dateCreated]`, or `title`.
    static func readIndexes(_ node: Node, entity: String, in document: inout YAMLDocument) -> [Index] {
        guard let items = document.items(of: node, what: "indexes") else { return [] }
        var indexes: [Index] = []
        for item in items {
            var name: String?
            var properties: [String] = []
            if item.mapping != nil {
                guard let entries = document.entries(of: item, what: "an index") else { continue }
                document.rejectUnknownKeys(entries, allowed: ["name", "properties"], in: "an index")
                name = entries.first { $0.key == "name" }.flatMap { document.identifier($0.value, what: "index name") }
                if let list = entries.first(where: { $0.key == "properties" })?.value {
                    properties = list.scalar != nil ? [document.identifier(list, what: "property name")].compactMap { $0 }
                        : (document.items(of: list, what: "properties") ?? []).compactMap { document.identifier($0, what: "property name") }
                }
            } else if item.scalar != nil {
                properties = [document.identifier(item, what: "property name")].compactMap { $0 }
            } else {
                properties = (document.items(of: item, what: "an index") ?? []).compactMap { document.identifier($0, what: "property name") }
            }
            if properties.isEmpty {
                document.error("an index needs at least one property", at: item)
                continue
            }
            indexes.append(Index(name: name ?? "\(entity)_" + properties.joined(separator: "_"), properties: properties))
        }
        return indexes
    }

    // MARK: Attributes

    static func readAttribute(_ item: (key: String, keyNode: Node, value: Node), entity: String, in document: inout YAMLDocument) -> Attribute? {
        guard let name = document.identifier(item.keyNode, what: "attribute name") else { return nil }
        let what = "attribute '\(entity).\(name)'"
        // Shorthand: `title: string`, or `image: binary?` for an optional attribute.
        if let scalar = item.value.scalar {
            var text = scalar.string.trimmingCharacters(in: .whitespaces)
            let optional = text.hasSuffix("?")
            if optional { text.removeLast() }
            guard let type = attributeType(text, at: item.value, in: &document) else { return nil }
            var attribute = Attribute(name: name, type: type, isOptional: optional)
            attribute.location = document.location(of: item.keyNode)
            return attribute
        }
        guard let entries = document.entries(of: item.value, what: what) else { return nil }
        document.rejectUnknownKeys(entries, allowed: attributeKeys, in: what)
        guard let typeEntry = entries.first(where: { $0.key == "type" }) else {
            document.error("\(what) has no type", at: item.keyNode, fix: "add 'type:', one of \(AttributeType.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        guard let typeName = document.string(typeEntry.value, what: "type"),
              let type = attributeType(typeName, at: typeEntry.value, in: &document) else { return nil }
        var attribute = Attribute(name: name, type: type)
        attribute.location = document.location(of: item.keyNode)
        for entry in entries {
            let value = entry.value
            switch entry.key {
            case "optional": attribute.isOptional = document.bool(value, what: "optional") ?? false
            case "transient": attribute.isTransient = document.bool(value, what: "transient") ?? false
            case "renamingIdentifier": attribute.renamingIdentifier = document.string(value, what: "renamingIdentifier")
            case "versionHashModifier": attribute.versionHashModifier = document.string(value, what: "versionHashModifier")
            case "externalStorage":
                attribute.allowsExternalStorage = document.bool(value, what: "externalStorage") ?? false
            case "preserveAfterDeletion":
                attribute.preservesAfterDeletion = document.bool(value, what: "preserveAfterDeletion") ?? false
            case "derivation": attribute.derivation = document.string(value, what: "derivation")
            case "valueTransformer":
                attribute.valueTransformer = document.string(value, what: "valueTransformer")
                if type != .transformable {
                    document.error("valueTransformer applies to transformable attributes only; \(what) is \(type.rawValue)", at: entry.keyNode,
                                   fix: "remove 'valueTransformer:' or change the type to transformable")
                }
            case "className": attribute.className = document.string(value, what: "className")
            case "userInfo": attribute.userInfo = document.stringMap(value, what: "userInfo")
            case "default":
                if !YAMLDocument.isNull(value) {
                    attribute.defaultValue = literal(value, as: type, what: "default of \(what)", in: &document)
                }
            case "min", "max":
                guard type.isNumeric || type == .date else {
                    document.error("'\(entry.key)' applies to numbers and dates; \(what) is \(type.rawValue)", at: entry.keyNode)
                    break
                }
                let bound = literal(value, as: type, what: "\(entry.key) of \(what)", in: &document)
                if entry.key == "min" { attribute.validation.min = bound } else { attribute.validation.max = bound }
            case "minLength", "maxLength":
                guard type == .string else {
                    document.error("'\(entry.key)' applies to strings; \(what) is \(type.rawValue)", at: entry.keyNode)
                    break
                }
                let length = document.count(value, what: entry.key)
                if entry.key == "minLength" { attribute.validation.minLength = length } else { attribute.validation.maxLength = length }
            case "regex":
                guard type == .string else {
                    document.error("'regex' applies to strings; \(what) is \(type.rawValue)", at: entry.keyNode)
                    break
                }
                guard let pattern = document.string(value, what: "regex") else { break }
                // Screened like MATCHES: validation runs the pattern on every value of a store.
                if let problem = RegexGuard.problem(with: pattern) {
                    document.error("regex refused: \(problem)", at: value, fix: RegexGuard.fix(for: problem))
                } else {
                    attribute.validation.regex = pattern
                }
            default: break
            }
        }
        return attribute
    }

    static func attributeType(_ text: String, at node: Node, in document: inout YAMLDocument) -> AttributeType? {
        if let type = AttributeType(rawValue: text) ?? typeAliases[text.lowercased()] ?? AttributeType(rawValue: text.lowercased()) {
            return type
        }
        let names = AttributeType.allCases.map(\.rawValue)
        document.error("unknown type '\(text)'", at: node, fix: Suggestions.didYouMean(text, in: names) ?? "use one of \(names.joined(separator: ", "))")
        return nil
    }

    /// Reads a scalar as a value of the attribute's type, from its text: `default: no` on a string
    /// attribute is the string "no", and `010` on an integer attribute is ten.
    static func literal(_ node: Node, as type: AttributeType, what: String, in document: inout YAMLDocument) -> Value? {
        guard let text = document.string(node, what: what) else { return nil }
        switch ValueParser.parse(text, as: type) {
        case .success(let value): return value
        case .failure(let problem):
            document.error("\(what): \(problem.message)", at: node)
            return nil
        }
    }

    // MARK: Relationships

    static func readRelationship(_ item: (key: String, keyNode: Node, value: Node), entity: String, in document: inout YAMLDocument) -> Relationship? {
        guard let name = document.identifier(item.keyNode, what: "relationship name") else { return nil }
        let what = "relationship '\(entity).\(name)'"
        guard let entries = document.entries(of: item.value, what: what) else { return nil }
        document.rejectUnknownKeys(entries, allowed: relationshipKeys, in: what)
        guard let destinationEntry = entries.first(where: { $0.key == "destination" }),
              let destination = document.identifier(destinationEntry.value, what: "destination") else {
            if !entries.contains(where: { $0.key == "destination" }) {
                document.error("\(what) has no destination", at: item.keyNode, fix: "add 'destination:', the related entity's name")
            }
            return nil
        }
        var relationship = Relationship(name: name, destination: destination)
        relationship.location = document.location(of: item.keyNode)
        for entry in entries {
            let value = entry.value
            switch entry.key {
            case "toMany": relationship.isToMany = document.bool(value, what: "toMany") ?? false
            case "ordered": relationship.isOrdered = document.bool(value, what: "ordered") ?? false
            case "inverse":
                // `inverse: null`: none, on purpose.
                if YAMLDocument.isNull(value) { relationship.declaresNoInverse = true } else { relationship.inverse = document.identifier(value, what: "inverse") }
            case "optional": relationship.isOptional = document.bool(value, what: "optional") ?? false
            case "transient": relationship.isTransient = document.bool(value, what: "transient") ?? false
            case "minCount": relationship.minCount = document.count(value, what: "minCount")
            case "maxCount": relationship.maxCount = document.count(value, what: "maxCount")
            case "renamingIdentifier": relationship.renamingIdentifier = document.string(value, what: "renamingIdentifier")
            case "versionHashModifier": relationship.versionHashModifier = document.string(value, what: "versionHashModifier")
            case "userInfo": relationship.userInfo = document.stringMap(value, what: "userInfo")
            case "deleteRule":
                guard let text = document.string(value, what: "deleteRule") else { break }
                if let rule = DeleteRule.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) {
                    relationship.deleteRule = rule
                } else {
                    let names = DeleteRule.allCases.map(\.rawValue)
                    document.error("unknown deleteRule '\(text)'", at: value, fix: Suggestions.didYouMean(text, in: names) ?? "use one of \(names.joined(separator: ", "))")
                }
            default: break
            }
        }
        return relationship
    }
}
