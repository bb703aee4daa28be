import Foundation
import MapcFoundation
import MapcModel
import MapcMigration

/// An Xcode mapping model read as a mapc mapping file.
public struct ImportedMapping: Sendable {
    /// The mapping.
    public var mapping: MappingModel
    /// The version it migrates from, found by matching the model embedded in the file.
    public var source: Schema
    /// The version it migrates to, found the same way.
    public var destination: Schema
    /// The mapping file's text.
    public var text: String
    /// The name mapc looks the file up by (`mapping_<from>_to_<to>.yaml`).
    public var fileName: String
    /// What was imported differently or not at all, and what the mapping needs before it runs
    /// (policies to port), each naming the element.
    public var warnings: [Diagnostic]
}

/// Reads Xcode mapping models (`.xcmappingmodel/xcmapping.xml`): a Core Data XML store of Xcode's
/// `XDDev*` objects, walked from its one `XDDEVMAPPINGMODEL` (files carry stale objects nothing
/// references). Entity mappings keep Xcode's order (`mappingnumber`) and names
/// (`<Source>To<Destination>`); a mapping without a source is an add mapping, one without a
/// destination a remove mapping. Property mappings become mapc expressions: archived value
/// expressions are decoded (`ExpressionArchive`), relationship mappings that name an entity
/// mapping become `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
/// …)`, and auto-generated ones `$source.<name>` (attributes) or
/// `destinationInstancesForSourceRelationshipNamed:` (relationships), as Xcode's compiler emits.
/// The source and destination versions are the schemas whose Core Data version hashes equal the
/// models embedded in the file; the model paths beside them are only a tie-breaker.
public enum XcodeMappingImporter {
    /// Imports a mapping model against the versions of a schema catalog. A custom policy the
    /// registry does not know is a warning (port it and register it).
    public static func importMapping(at path: String, schemas: SchemaCatalog, policies: PolicyRegistry = .shared, pass: Int? = nil) throws -> ImportedMapping {
        var file = path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw MapcError.notFound("\(path) does not exist; give an .xcmappingmodel folder or its xcmapping.xml")
        }
        if isFolder.boolValue { file = (path as NSString).appendingPathComponent("xcmapping.xml") }
        guard FileManager.default.fileExists(atPath: file) else {
            throw MapcError.input("\(path) holds no xcmapping.xml; is it an Xcode mapping model?")
        }
        let root = try XMLTree.read(path: file)
        guard root.name == "database" else {
            throw MapcError.input("\(file):\(root.location.line):\(root.location.column): the root element is <\(root.name)>, not <database>; this is not an Xcode mapping model")
        }
        let graph = ObjectGraph(root, path: file)
        if !graph.problems.isEmpty { throw DiagnosticsError(graph.problems) }
        let models = graph.objects.values.filter { $0.type == "XDDEVMAPPINGMODEL" }
        guard models.count == 1, let model = models.first else {
            throw MapcError.input("\(file) holds \(models.count) mapping models (XDDEVMAPPINGMODEL); an Xcode mapping model file holds exactly one")
        }
        var warnings: [Diagnostic] = []
        let before = warnings.count
        let source = try version(of: model, side: "source", in: schemas, file: file, warnings: &warnings)
        let destination = try version(of: model, side: "destination", in: schemas, file: file, warnings: &warnings)
        let byHashes = warnings.count == before

        // Entity mappings, in Xcode's order.
        let entityMappings = try graph.related(model, "entitymappings", of: "XDDEVENTITYMAPPING")
            .sorted { (Int($0.attribute("mappingnumber") ?? "") ?? Int.max, $0.id) < (Int($1.attribute("mappingnumber") ?? "") ?? Int.max, $1.id) }
        var mappings: [EntityMapping] = []
        var usedNames: Set<String> = []
        warnings += unread(model, what: "the mapping model")
        for object in entityMappings {
            let sourceName = object.attribute("sourcename").flatMap { $0.isEmpty ? nil : $0 }
            let destinationName = object.attribute("destinationname").flatMap { $0.isEmpty ? nil : $0 }
            // The name Xcode's mapping editor shows, which its user may change (relationship
            // mappings and policies look the mapping up by it); Xcode's own otherwise, and for a
            // name a mapping file cannot give (said: a lookup by it must be changed too).
            let standard = "\(sourceName ?? "")To\(destinationName ?? "")"
            var name = standard
            if let given = object.attribute("name"), !given.isEmpty, given != standard {
                if YAMLDocument.isIdentifier(given) {
                    name = given
                } else {
                    warnings.append(.warning("the entity mapping named '\(given)' is named \(standard): a mapping's name is letters, digits and _; change a lookup by the old name (a relationship mapping's, a policy's) to \(standard)",
                                             at: object.location(of: "name")))
                }
            }
            if !usedNames.insert(name).inserted {
                var number = 2
                while !usedNames.insert("\(name)\(number)").inserted { number += 1 }
                warnings.append(.warning("two entity mappings would both be named \(name); the second is named \(name)\(number)", at: object.location))
                name = "\(name)\(number)"
            }
            let type: EntityMappingType = sourceName == nil ? .add : (destinationName == nil ? .remove : .transform)
            var mapping = EntityMapping(name: name, source: sourceName, destination: destinationName, type: type)
            warnings += unread(object, what: "entity mapping \(name)")
            if let data = object.binary("userinfodata") {
                mapping.userInfo = userInfo(data, what: "the user info of entity mapping \(name)", at: object.location(of: "userinfodata"), warnings: &warnings)
            }
            if let className = object.attribute("migrationpolicyclassname"), !className.isEmpty {
                // Swift's module prefix names where the class lived in the app, not the policy.
                let policy = String(className.split(separator: ".").last ?? Substring(className))
                mapping.policy = policy
                if policies.policy(named: policy) == nil {
                    warnings.append(.warning("mapping \(name) uses the custom policy \(className): port it to MapcKit's EntityMigrationPolicy and register it as '\(policy)' (see docs/core-data.md)", at: object.location))
                }
            }
            if let predicate = object.attribute("sourcefilterpredicatestring"), !predicate.trimmingCharacters(in: .whitespaces).isEmpty {
                mapping.filter = expression(predicate, what: "the filter of \(name)", at: object.location, warnings: &warnings, todo: &mapping.todo)
            }
            // With 'autogenerate' on, Xcode compiles the mapping's source from its source entity and
            // filter, whatever expression the file still keeps (left from an earlier edit): so does mapc.
            let autogenerated = ["1", "yes", "true"].contains((object.attribute("autogenerateexpression") ?? "").lowercased())
            if autogenerated, object.binary("sourceexpressiondata") != nil {
                warnings.append(.warning("\(name): its stored source expression is not imported: 'autogenerate' is on, so Xcode reads the objects of \(sourceName ?? "its source entity")\(mapping.filter == nil ? "" : " that pass its filter"), as mapc does",
                                         at: object.location))
            } else if let data = object.binary("sourceexpressiondata") {
                if let text = decoded(data, what: "the source expression of \(name)", at: object.location, warnings: &warnings, todo: &mapping.todo) {
                    mapping.sourceExpression = expression(text, what: "the source expression of \(name)", at: object.location, warnings: &warnings, todo: &mapping.todo)
                }
            }
            let sourceEntity = sourceName.flatMap(source.entity(named:))
            let sourceAttributes = Set(sourceEntity.map { source.allAttributes(of: $0).filter { !$0.isTransient }.map(\.name) } ?? [])
            let sourceRelationships = Set(sourceEntity.map { source.allRelationships(of: $0).filter { !$0.isTransient }.map(\.name) } ?? [])
            for property in try graph.related(object, "attributemappings", of: "XDDEVATTRIBUTEMAPPING").sorted(by: { ($0.attribute("name") ?? "") < ($1.attribute("name") ?? "") }) {
                let propertyName = try property.name()
                let what = "attribute \(propertyName) of \(name)"
                warnings += unread(property, what: what)
                var text: String?
                if let data = property.binary("valueexpressiondata") {
                    text = decoded(data, what: "the value expression of \(what)", at: property.location, warnings: &warnings, todo: &mapping.todo)
                } else if let destinationEntity = destinationName.flatMap(destination.entity(named:)),
                          !destination.allAttributes(of: destinationEntity).contains(where: { $0.name == propertyName }) {
                    // Left from an earlier state of the model: Xcode maps nothing by it (one with an
                    // expression is imported, and `check` names the attribute as unknown).
                    warnings.append(.warning("\(what): \(destinationEntity.name) of \(destination.version) has no attribute \(propertyName), so this mapping, which has no expression, is not imported (Xcode keeps such a mapping from an earlier state of the model); delete it in Xcode's mapping editor",
                                             at: property.location))
                } else if sourceAttributes.contains(propertyName) {
                    text = ExpressionLiteral.sourceKey(propertyName)
                }
                if let text, let value = expression(text, what: "the value expression of \(what)", at: property.location, warnings: &warnings, todo: &mapping.todo) {
                    mapping.attributes.append(PropertyMapping(name: propertyName, expression: value))
                }
            }
            for property in try graph.related(object, "relationshipmappings", of: "XDDEVRELATIONSHIPMAPPING").sorted(by: { ($0.attribute("name") ?? "") < ($1.attribute("name") ?? "") }) {
                let propertyName = try property.name()
                let what = "relationship \(propertyName) of \(name)"
                warnings += unread(property, what: what)
                var text: String?
                if let target = property.attribute("sourcemappingname"), !target.isEmpty {
                    // Xcode's `$source.all`: the keys after the variable written as mapc reads them (`$source.#all`).
                    let keyPath = property.attribute("sourcekeypath").flatMap { $0.isEmpty ? nil : $0 }.map { path in
                        guard let dot = path.firstIndex(of: "."), path.hasPrefix("$") else { return path }
                        return String(path[..<dot]) + "." + ExpressionLiteral.keyPath(String(path[path.index(after: dot)...]))
                    } ?? "$source"
                    text = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \(ExpressionArchive.quoted(target)), \(keyPath))"
                } else if let data = property.binary("valueexpressiondata") {
                    text = decoded(data, what: "the value expression of \(what)", at: property.location, warnings: &warnings, todo: &mapping.todo)
                } else if sourceRelationships.contains(propertyName) {
                    text = "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \(ExpressionArchive.quoted(propertyName)), \(ExpressionLiteral.sourceKey(propertyName)))"
                }
                if let text, let value = expression(text, what: "the value expression of \(what)", at: property.location, warnings: &warnings, todo: &mapping.todo) {
                    mapping.relationships.append(PropertyMapping(name: propertyName, expression: value))
                }
            }
            mappings.append(mapping)
        }
        // Core Data migrates no object of a source entity no entity mapping reads: the model's
        // meaning, written as a remove mapping, so that the file says it (a mapping file drops
        // nothing without saying so, and `check --strict` refuses a silent drop). Only where that
        // is sure; otherwise `check` says what it sees, as before: a pass of several (another may
        // read them), a custom policy (it may read any object), an expression not imported (its
        // fetch may), a sub-entity of an entity read (Xcode's fetch of the parent may take it).
        var notes: [String: [String]] = [:]
        if pass == nil, mappings.allSatisfy({ $0.policy == nil && $0.todo.isEmpty }) {
            var taken = Set(mappings.map(\.name))
            let read = { (entity: Entity) in !MappingChecker.readers(of: entity, in: source, among: mappings).isEmpty }
            for entity in source.entities where !entity.isAbstract && !read(entity) && !source.ancestry(of: entity).dropFirst().contains(where: read) {
                var name = "Remove\(entity.name)"
                while taken.contains(name) { name += "_" }
                taken.insert(name)
                mappings.append(EntityMapping(name: name, source: entity.name, destination: nil, type: .remove))
                notes[name] = ["No entity mapping of \(Files.fileURL(path).lastPathComponent) reads \(entity.name) objects, so Core Data does not migrate them: they are dropped."]
                warnings.append(.warning("no entity mapping reads \(entity.name) objects of \(source.version), so Core Data drops them: written as the remove mapping '\(name)'",
                                         at: model.location, fix: "map \(entity.name) in the model (or edit the mapping file) if its objects are to be kept"))
            }
        }
        var imported = MappingModel(source: source.version, destination: destination.version, entityMappings: mappings)
        imported.pass = pass
        let fileName = "mapping_\(source.version)_to_\(destination.version)\(pass.map { ".pass\($0)" } ?? "").yaml"
        let name = Files.fileURL(path).lastPathComponent
        let text = MappingWriter.yaml(imported, source: source, destination: destination, notes: notes, order: schemas.order,
                                      header: ["Mapping from \(source.displayName) to \(destination.version), imported by mapc from the Xcode mapping model \(name).",
                                               byHashes ? "Its versions were found by the Core Data version hashes of the models embedded in it."
                                                        : "Its versions were not all found by the models embedded in it (see the warnings `mapc import` gave): check them.",
                                               "Edit it like any mapping file; `mapc check` verifies it and `mapc run` uses it."])
        // What was written must read back as a mapping of these versions.
        let (loaded, diagnostics) = MappingLoader.parse(source: SourceFile(path: fileName, text: text))
        guard let loaded, !diagnostics.hasErrors else { throw DiagnosticsError(diagnostics) }
        return ImportedMapping(mapping: loaded, source: source, destination: destination, text: text, fileName: fileName, warnings: warnings)
    }

    // MARK: Versions

    /// The version whose Core Data hashes equal the model embedded on one side of the mapping.
    private static func version(of model: ObjectGraph.Object, side: String, in schemas: SchemaCatalog, file: String, warnings: inout [Diagnostic]) throws -> Schema {
        let hint = model.attribute("\(side)modelpath").map { Files.fileURL($0).deletingPathExtension().lastPathComponent }
        guard let data = model.binary("\(side)modeldata") else {
            // Older files have no embedded model: the path is all there is.
            if let hint, let named = schemas.schema(version: hint) {
                warnings.append(.warning("the \(side) model is not embedded in the file; version \(named.version) was taken from its path", at: model.location))
                return named
            }
            throw MapcError.input("\(file): the \(side) model is neither embedded nor named by a path matching a version of the schemas (\(model.attribute("\(side)modelpath") ?? "no path"))")
        }
        let embedded = try EmbeddedModel.schema(from: data, what: "\(file): the embedded \(side) model")
        let hashes = CoreDataVersionHash.entityHashes(of: embedded)
        let matching = schemas.schemas.filter { CoreDataVersionHash.entityHashes(of: $0) == hashes }
        if let named = matching.first(where: { $0.version == hint }) ?? matching.first {
            if matching.count > 1 {
                warnings.append(.warning("the \(side) model matches versions \(matching.map(\.version).joined(separator: ", ")) alike; \(named.version) was chosen\(named.version == hint ? " by the model's path" : "")", at: model.location))
            }
            return named
        }
        // Say what differs: from the version the path names (which a mapping made against an
        // earlier state of that version still belongs to), or from the closest one.
        func differences(_ schema: Schema) -> [String] {
            Self.differences(embedded: embedded, hashes: hashes, version: schema)
        }
        if let hint, let named = schemas.schema(version: hint) {
            warnings.append(.warning("the \(side) model embedded in the mapping model is not exactly version \(named.version), which its path names: "
                                     + differences(named).prefix(8).joined(separator: "; ")
                                     + ". The mapping was made against an earlier state of that version; it is imported for \(named.version): check it",
                                     at: model.location))
            return named
        }
        let closest = schemas.schemas.min { differences($0).count < differences($1).count }
        let detail = closest.map { "; closest is \($0.version): " + differences($0).prefix(6).joined(separator: "; ") } ?? ""
        throw MapcError.input("\(file): no version of the schemas matches the \(side) model embedded in the mapping model (its path says \(hint ?? "nothing"))\(detail); import the data model the mapping was made for")
    }

    /// What differs between an embedded model and a version, entity by entity and, within an
    /// entity, property by property, in words.
    static func differences(embedded: Schema, hashes: [String: String], version schema: Schema) -> [String] {
        let theirs = CoreDataVersionHash.entityHashes(of: schema)
        func describe(_ property: Property) -> String {
            switch property {
            case .attribute(let a):
                return "\(a.type.rawValue)\(a.isOptional ? ", optional" : "")\(a.isTransient ? ", transient" : "")"
            case .relationship(let r):
                return "to \(r.isToMany ? "many " : "")\(r.destination)\(r.isOptional ? ", optional" : "")\(r.isOrdered ? ", ordered" : "")\(r.inverse.map { ", inverse \($0)" } ?? "")"
            }
        }
        return Set(hashes.keys).union(theirs.keys).sorted().compactMap { name in
            switch (embedded.entity(named: name), schema.entity(named: name)) {
            case (nil, _?): return "\(name) is in \(schema.version) but not in the embedded model"
            case (_?, nil): return "\(name) is in the embedded model but not in \(schema.version)"
            case let (a?, b?) where hashes[name] != theirs[name]:
                let mine = Dictionary((a.attributes.map { Property.attribute($0) } + a.relationships.map { Property.relationship($0) }).map { ($0.name, describe($0)) }, uniquingKeysWith: { x, _ in x })
                let other = Dictionary((b.attributes.map { Property.attribute($0) } + b.relationships.map { Property.relationship($0) }).map { ($0.name, describe($0)) }, uniquingKeysWith: { x, _ in x })
                let changed = Set(mine.keys).union(other.keys).sorted().compactMap { property -> String? in
                    guard mine[property] != other[property] else { return nil }
                    return "\(property): \(mine[property] ?? "absent") in the embedded model, \(other[property] ?? "absent") in \(schema.version)"
                }
                return "\(name) differs" + (changed.isEmpty ? "" : " (" + changed.joined(separator: "; ") + ")")
            default: return nil
            }
        }
    }

    // MARK: What the objects hold

    /// The attributes Xcode writes on each kind of object, which the import reads (a property
    /// mapping's `userinfodata` only to say it is not imported).
    static let readAttributes: [String: Set<String>] = [
        "XDDEVMAPPINGMODEL": ["sourcemodelpath", "destinationmodelpath", "sourcemodeldata", "destinationmodeldata"],
        "XDDEVENTITYMAPPING": ["name", "sourcename", "destinationname", "mappingtypename", "mappingnumber", "migrationpolicyclassname",
                               "sourcefilterpredicatestring", "sourceexpressiondata", "autogenerateexpression", "userinfodata"],
        "XDDEVATTRIBUTEMAPPING": ["name", "valueexpressiondata", "autogenerateexpression", "userinfodata"],
        "XDDEVRELATIONSHIPMAPPING": ["name", "valueexpressiondata", "autogenerateexpression", "sourcemappingname", "sourcekeypath", "userinfodata"],
    ]

    /// A warning for each attribute of an object the import does not read (a later Xcode's, or
    /// a hand edit's), and for a property mapping's user info, which mapc's property mappings do
    /// not hold: what is passed over is said, never dropped in silence.
    private static func unread(_ object: ObjectGraph.Object, what: String) -> [Diagnostic] {
        let known = readAttributes[object.type] ?? []
        var said: [Diagnostic] = object.attributes.keys.sorted().filter { !known.contains($0) }.map { name in
            .warning("\(what): the attribute '\(name)' is not one mapc reads, and is not imported; if it matters to the migration, write it into the mapping by hand", at: object.location(of: name))
        }
        if object.type != "XDDEVENTITYMAPPING", object.binary("userinfodata") != nil {
            said.append(.warning("\(what): its user info is not imported (a mapc property mapping has none); a policy reading it can keep the values in its entity mapping's 'userInfo'",
                                 at: object.location(of: "userinfodata")))
        }
        return said
    }

    /// An entity mapping's user info (an archived dictionary; Xcode's inspector writes text
    /// values): its entries as text, numbers and booleans written out; an entry of another kind,
    /// or an archive that cannot be read, is a warning, never dropped in silence.
    private static func userInfo(_ data: Data, what: String, at location: FileLocation, warnings: inout [Diagnostic]) -> [String: String] {
        let archive: KeyedArchive
        do { archive = try KeyedArchive(data: data, what: what) } catch {
            warnings.append(.warning("\(error) (not imported: write its entries into the mapping's 'userInfo' by hand)", at: location))
            return [:]
        }
        guard let root = archive.rootObject, let className = archive.className(of: root), className.hasSuffix("Dictionary") else {
            warnings.append(.warning("\(what) is not an archived dictionary (not imported: write its entries into the mapping's 'userInfo' by hand)", at: location))
            return [:]
        }
        var entries: [String: String] = [:]
        for (key, value) in archive.entries(of: root) {
            switch value {
            case let text as String: entries[key] = text
            // A property list's boolean (an archived number of 1 is a number, said as one).
            case _ where PropertyList.boolean(value) != nil: entries[key] = PropertyList.boolean(value) == true ? "YES" : "NO"
            case let number as NSNumber: entries[key] = number.stringValue
            default:
                warnings.append(.warning("\(what): the entry '\(key)' is not text or a number, and is not imported; write it into the mapping's 'userInfo' by hand", at: location))
            }
        }
        return entries
    }

    // MARK: Expressions

    /// An expression archive's text; when it cannot be read, a warning now and a `todo:` item in
    /// the mapping, which `mapc check` reports until someone writes the expression.
    private static func decoded(_ data: Data, what: String, at location: FileLocation, warnings: inout [Diagnostic], todo: inout [MappingTodo]) -> String? {
        do { return try ExpressionArchive.text(of: data, what: what) } catch {
            warnings.append(.warning("\(error) (left out of the mapping: write it by hand)", at: location))
            todo.append(MappingTodo("\(what) could not be read from the Xcode mapping model and was left out (\(error)); write it by hand"))
            return nil
        }
    }

    private static func expression(_ text: String, what: String, at location: FileLocation, warnings: inout [Diagnostic], todo: inout [MappingTodo]) -> MappingExpression? {
        do { return try MappingExpression(text) } catch {
            warnings.append(.warning("\(what), \(text), does not parse (\(error)); it is left out: write it by hand", at: location))
            todo.append(MappingTodo("\(what), \(text), does not parse and was left out (\(error)); write it by hand"))
            return nil
        }
    }

    // MARK: The object graph of the file

    /// The `<object>` elements of a Core Data XML store, by id.
    struct ObjectGraph {
        struct Object {
            var id: String
            var type: String
            var location: FileLocation
            var attributes: [String: String]
            var relationships: [String: [String]]
            /// Where each attribute's element is.
            var attributeLocations: [String: FileLocation] = [:]

            func attribute(_ name: String) -> String? { attributes[name] }

            /// Where an attribute's element is (the object's, for one it does not have).
            func location(of attribute: String) -> FileLocation { attributeLocations[attribute] ?? location }

            /// A property mapping's name: the destination property it sets. Xcode never writes one
            /// without, and passing it over left that property to nothing.
            func name() throws -> String {
                guard let name = attribute("name"), !name.isEmpty else {
                    throw DiagnosticsError([.error("the \(type) object \(id) has no name (the destination property it sets); the mapping model is damaged: open it in Xcode and save it again, or write this mapping by hand", at: location)])
                }
                return name
            }

            /// A binary attribute's bytes (base64 in the file); nil when it is absent or empty. Text
            /// that is not base64 gives no bytes, not nil: nil is "absent", and a damaged archive
            /// taken for an absent one was left out in silence (a value expression) or replaced
            /// by a guess from a path (an embedded model). Every reader refuses no bytes as damaged.
            func binary(_ name: String) -> Data? {
                guard let text = attributes[name], !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
                return Data(base64Encoded: text, options: .ignoreUnknownCharacters) ?? Data()
            }
        }

        var objects: [String: Object] = [:]
        /// Objects the file cannot hold: without an id or a type, or two of one id.
        var problems: [Diagnostic] = []

        init(_ root: XMLNode, path: String) {
            for node in root.children(named: "object") {
                guard let id = node.attributes["id"], !id.isEmpty, let type = node.attributes["type"], !type.isEmpty else {
                    problems.append(.error("an <object> without \(node.attributes["id"]?.isEmpty == false ? "a type" : "an id"); the mapping model is damaged: open it in Xcode and save it again", at: node.location))
                    continue
                }
                if let first = objects[id] {
                    problems.append(.error("two objects have the id \(id) (the first on line \(first.location.line)); the mapping model is damaged: open it in Xcode and save it again", at: node.location))
                    continue
                }
                var object = Object(id: id, type: type, location: node.location, attributes: [:], relationships: [:])
                for child in node.children {
                    guard let name = child.attributes["name"] else { continue }
                    if child.name == "attribute" {
                        object.attributes[name] = child.text.trimmingCharacters(in: .whitespacesAndNewlines)
                        object.attributeLocations[name] = child.location
                    }
                    if child.name == "relationship" { object.relationships[name] = (child.attributes["idrefs"] ?? "").split(separator: " ").map(String.init) }
                }
                objects[id] = object
            }
        }

        /// The objects of a type a relationship of an object refers to. A reference to no object,
        /// or to one of another type, is a damaged file: passing it over dropped an entity or
        /// property mapping in silence.
        func related(_ object: Object, _ name: String, of type: String) throws -> [Object] {
            // A relationship of Xcode's object graph is a set: an id listed twice is one object
            // (it made a property mapping twice, a duplicate key in a file never written).
            var seen = Set<String>()
            var related: [Object] = []
            var problems: [Diagnostic] = []
            for id in object.relationships[name] ?? [] where seen.insert(id).inserted {
                guard let target = objects[id] else {
                    problems.append(.error("\(name) of the \(object.type) object \(object.id) lists \(id), which the file does not hold; the mapping model is damaged: open it in Xcode and save it again", at: object.location))
                    continue
                }
                guard target.type == type else {
                    problems.append(.error("\(name) of the \(object.type) object \(object.id) lists \(id), a \(target.type), where a \(type) belongs; the mapping model is damaged: open it in Xcode and save it again", at: object.location))
                    continue
                }
                related.append(target)
            }
            if !problems.isEmpty { throw DiagnosticsError(problems) }
            return related
        }
    }
}
