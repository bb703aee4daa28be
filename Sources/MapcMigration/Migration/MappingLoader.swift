import Foundation
internal import Yams
import MapcFoundation
import MapcModel

/// Reads mapping files into `MappingModel` values, reporting every structural problem with its
/// position. Semantic checks against the schemas are `MappingChecker`'s.
public enum MappingLoader {
    package static let topKeys = ["source", "destination", "pass", "entityMappings"]
    package static let entityMappingKeys = ["name", "source", "destination", "type", "sourceExpression", "filter", "policy", "userInfo",
                                    "attributes", "relationships", "sourceHash", "destinationHash", "todo", "drops"]

    /// Reads a mapping file; returns what could be read and every diagnostic, never throws.
    public static func parse(source: SourceFile) -> (mapping: MappingModel?, diagnostics: [Diagnostic]) {
        var document = YAMLDocument(source: source)
        guard let root = document.root, let top = document.entries(of: root, what: "a mapping file") else {
            return (nil, document.diagnostics)
        }
        document.rejectUnknownKeys(top, allowed: topKeys, in: "the mapping file")
        var model = MappingModel(source: "", destination: "", entityMappings: [], file: source)
        let start = FileLocation(path: source.path, line: 1, column: 1)
        for key in ["source", "destination", "entityMappings"] where !top.contains(where: { $0.key == key }) {
            let what = key == "entityMappings" ? "'entityMappings:', the list of entity mappings" : "'\(key):', the \(key) version"
            document.diagnostics.append(.error("missing \(what)", at: start, fix: key == "entityMappings" ? nil : "add a line such as '\(key): v2'"))
        }
        var names: [String: FileLocation] = [:]
        for entry in top {
            model.valueLocations[entry.key] = document.location(of: entry.value)
            // Where the file's list of mappings begins, for what is said of the list as a whole.
            if entry.key == "entityMappings" { model.valueLocations["entityMappings:"] = document.location(of: entry.keyNode) }
            switch entry.key {
            case "source": model.source = document.string(entry.value, what: "source") ?? ""
            case "destination": model.destination = document.string(entry.value, what: "destination") ?? ""
            case "pass":
                if let pass = document.count(entry.value, what: "pass", least: 1, why: "the first pass is 1") { model.pass = pass }
            case "entityMappings":
                guard let items = document.items(of: entry.value, what: "entityMappings") else { break }
                for item in items {
                    let errorsBefore = document.diagnostics.filter { $0.severity == .error }.count
                    guard var mapping = readEntityMapping(item, in: &document) else { continue }
                    // The errors of its property mappings are counted apart: the rest is still checked.
                    mapping.hasLoadErrors = document.diagnostics.filter { $0.severity == .error }.count > errorsBefore + mapping.propertyLoadErrors
                    if let first = names[mapping.name] {
                        document.error("duplicate entity mapping name '\(mapping.name)' (first at line \(first.line))", at: item["name"] ?? item,
                                       fix: "names must be unique: $manager finds mappings by name")
                    } else if let location = mapping.location {
                        names[mapping.name] = location
                    }
                    model.entityMappings.append(mapping)
                }
            default: break
            }
        }
        return (model, document.diagnostics)
    }

    static func readEntityMapping(_ node: Node, in document: inout YAMLDocument) -> EntityMapping? {
        guard let entries = document.entries(of: node, what: "an entity mapping") else { return nil }
        document.rejectUnknownKeys(entries, allowed: entityMappingKeys, in: "an entity mapping")
        func value(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        guard let nameNode = value("name") else {
            document.error("an entity mapping needs a 'name:'", at: node, fix: "name it after what it does, such as NoteToNote")
            return nil
        }
        guard let name = document.identifier(nameNode, what: "entity mapping name") else { return nil }
        // `null` (or `~`, or nothing) says there is none; `Null` and `NULL` are entities' names
        // (Core Data's usually begin with a capital, as a schema file reads them; an entity
        // named `null` in lowercase is written quoted, `"null"`).
        func none(_ node: Node) -> Bool { YAMLDocument.isNull(node) && node.scalar?.string.first?.isUppercase != true }
        let source = value("source").flatMap { none($0) ? nil : document.identifier($0, what: "source entity") }
        let destination = value("destination").flatMap { none($0) ? nil : document.identifier($0, what: "destination entity") }
        var type: EntityMappingType
        if let typeNode = value("type"), let text = document.string(typeNode, what: "type") {
            if let given = EntityMappingType(rawValue: text.lowercased()) {
                type = given
            } else {
                let names = EntityMappingType.allCases.map(\.rawValue)
                document.error("unknown entity mapping type '\(text)'", at: typeNode, fix: Suggestions.didYouMean(text, in: names) ?? "use one of \(names.joined(separator: ", "))")
                type = .transform
            }
        } else {
            type = value("policy") != nil ? .custom : (source == nil ? .add : (destination == nil ? .remove : .transform))
        }
        var mapping = EntityMapping(name: name, source: source, destination: destination, type: type)
        mapping.location = document.location(of: nameNode)
        for entry in entries {
            mapping.valueLocations[entry.key] = document.location(of: entry.value)
            switch entry.key {
            case "filter": mapping.filter = expression(entry.value, what: "filter", in: &document)
            case "sourceExpression": mapping.sourceExpression = expression(entry.value, what: "sourceExpression", in: &document)
            case "policy": mapping.policy = document.string(entry.value, what: "policy")
            case "userInfo": mapping.userInfo = document.stringMap(entry.value, what: "userInfo")
            case "attributes", "relationships":
                let before = document.diagnostics.filter { $0.severity == .error }.count
                let read = propertyMappings(entry.value, what: "\(entry.key) of '\(name)'", in: &document, unread: &mapping.unreadPropertyMappings)
                if entry.key == "attributes" { mapping.attributes = read } else { mapping.relationships = read }
                mapping.propertyLoadErrors += document.diagnostics.filter { $0.severity == .error }.count - before
            case "sourceHash": mapping.sourceHash = recordedHash(entry.value, in: &document)
            case "destinationHash": mapping.destinationHash = recordedHash(entry.value, in: &document)
            case "drops":
                if YAMLDocument.isNull(entry.value) { break }
                for item in document.items(of: entry.value, what: "drops") ?? [] {
                    if let property = document.identifier(item, what: "a dropped property") {
                        mapping.drops.append(property)
                        mapping.valueLocations["drops.\(property)"] = document.location(of: item)
                    }
                }
            case "todo":
                if YAMLDocument.isNull(entry.value) { break }
                for item in document.items(of: entry.value, what: "todo") ?? [] {
                    if let text = document.string(item, what: "a todo item") { mapping.todo.append(MappingTodo(text, location: document.location(of: item))) }
                }
            default: break
            }
        }
        // An omitted type with the same entity on both sides and no property mappings copies everything.
        if value("type") == nil, type == .transform, source == destination, mapping.attributes.isEmpty, mapping.relationships.isEmpty,
           value("attributes") == nil, value("relationships") == nil {
            mapping.type = .copy
        }
        return mapping
    }

    /// `unread` gains the name of each property mapping that cannot be read, and becomes nil when
    /// a name cannot be (or the section is no mapping of names).
    static func propertyMappings(_ node: Node, what: String, in document: inout YAMLDocument, unread: inout Set<String>?) -> [PropertyMapping] {
        if YAMLDocument.isNull(node) { return [] }
        guard let entries = document.entries(of: node, what: what) else {
            unread = nil
            return []
        }
        var result: [PropertyMapping] = []
        for entry in entries {
            guard let name = document.identifier(entry.keyNode, what: "property name") else {
                unread = nil
                continue
            }
            guard let parsed = expression(entry.value, what: "the expression of '\(name)'", in: &document) else {
                unread?.insert(name)
                continue
            }
            result.append(PropertyMapping(name: name, expression: parsed, location: document.location(of: entry.keyNode)))
        }
        return result
    }

    /// Parses a scalar as an expression placed where its text starts in the file.
    static func expression(_ node: Node, what: String, in document: inout YAMLDocument) -> MappingExpression? {
        guard let scalar = node.scalar else {
            document.error("\(what) must be an expression written as one value", at: node, fix: "quote it if it contains ': ' or starts with '{' or '['")
            return nil
        }
        // A value starting with '!' (NOT: `!done`) is a YAML tag: said so by the one reader of text.
        guard document.string(node, what: what) != nil else { return nil }
        var origin = document.location(of: node)
        switch scalar.style {
        case .singleQuoted, .doubleQuoted: origin.column += 1
        case .literal, .folded:
            // The text starts on the next line, after its indentation.
            origin.line += 1
            let indentation = document.source.line(origin.line)?.prefix { $0 == " " }.count ?? 0
            origin.column = indentation + 1
        default: break
        }
        var source = ExpressionSource(text: scalar.string, origin: origin)
        source.quotedInFile = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
        source.placement = YAMLScalarPlacement(of: node, in: document.source)
        switch MappingExpression.parse(source) {
        case .success(let parsed): return parsed
        case .failure(let diagnostic):
            document.diagnostics += source.withQuotingHint([diagnostic])
            return nil
        }
    }

    static func recordedHash(_ node: Node, in document: inout YAMLDocument) -> RecordedHash? {
        let location = document.location(of: node)
        if let text = node.scalar?.string { return RecordedHash(hash: text, location: location) }
        guard let entries = document.entries(of: node, what: "a recorded hash") else { return nil }
        document.rejectUnknownKeys(entries, allowed: ["hash", "properties"], in: "a recorded hash")
        let hash = entries.first { $0.key == "hash" }.flatMap { document.string($0.value, what: "hash") } ?? ""
        let properties = entries.first { $0.key == "properties" }.map { document.stringMap($0.value, what: "properties") } ?? [:]
        return RecordedHash(hash: hash, properties: properties, location: location)
    }
}
