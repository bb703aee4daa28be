import Foundation
import MapcFoundation
import MapcModel
import MapcMigration

/// The reading of one version's `contents`: entities, attributes and relationships as Xcode
/// writes them, with a warning for what mapc does not import.
extension XcodeModelImporter {
    /// Turns `<entity>` elements into entities, collecting warnings.
    struct ModelReader {
        /// What leaving a composite attribute out costs, in each warning about one (either form Xcode writes).
        static let compositeCost = "mapc has no composite attributes, so this version's entity hashes are not Core Data's and a store of it matches no version "
            + "(`mapc status` says which); migrate such stores with Core Data"

        let path: String
        var warnings: [Diagnostic] = []
        /// Where each indexed property of each index stands, by entity: the element an index's
        /// property was read from, for what is said of it once every entity is known.
        var indexElements: [String: [(index: String, property: String, location: FileLocation)]] = [:]

        /// XML attributes with no meaning for stored data: editor, code generation and sync settings.
        static let ignored: Set<String> = ["syncable", "usesScalarValueType", "codeGenerationType", "positionX", "positionY", "width", "height",
                                           "spotlightIndexingEnabled", "allowsCloudEncryption", "deletionRule", "inverseEntity"]

        init(path: String) { self.path = path }

        /// What makes the version one Core Data itself would refuse (it is not imported).
        var errors: [Diagnostic] = []

        mutating func warn(_ message: String, at node: XMLNode) {
            warnings.append(.warning(message, at: node.location))
        }

        mutating func fail(_ message: String, at node: XMLNode, fix: String) {
            errors.append(.error(message, at: node.location, fix: fix))
        }

        private mutating func reportUnknown(_ node: XMLNode, known: Set<String>, what: String) {
            for name in node.attributes.keys.sorted() where !known.contains(name) && !Self.ignored.contains(name) {
                warn("\(what): the setting \(name)=\"\(node.attributes[name] ?? "")\" is not imported", at: node)
            }
        }

        /// A boolean setting: absent is NO; a value that is neither YES nor NO (as Xcode writes
        /// them, or true/false, 1/0) is refused, never read as NO (`optional="MAYBE"` made a
        /// required attribute, and changed the hashes stores are matched by).
        private mutating func flag(_ node: XMLNode, _ name: String) -> Bool {
            guard let text = node.attributes[name] else { return false }
            switch text.lowercased() {
            case "yes", "true", "1": return true
            case "no", "false", "0": return false
            default:
                fail("<\(node.name)\(node.attributes["name"].map { " name=\"\($0)\"" } ?? "")>: \(name)=\"\(text)\" is neither YES nor NO", at: node,
                     fix: "Xcode writes \(name)=\"YES\" or leaves the setting out for NO: correct it in the model")
                return false
            }
        }

        private func nonEmpty(_ node: XMLNode, _ name: String) -> String? {
            node.attributes[name].flatMap { $0.isEmpty ? nil : $0 }
        }

        mutating func entity(_ node: XMLNode) -> Entity? {
            guard let name = nonEmpty(node, "name") else {
                fail("an entity without a name", at: node, fix: "give it a name in Xcode's model editor (Core Data refuses an entity without one)")
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
                    if child.attributes["attributeType"] == "Composite" { entity.notImported.append("\(child.attributes["name"] ?? "?") (a composite attribute)") }
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
                            indexElements[name, default: []].append((indexName, property, element.location))
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
                        let elements = compound.children(named: "index").compactMap { element in nonEmpty(element, "value").map { ($0, element.location) } }
                        let properties = elements.map(\.0)
                        if !properties.isEmpty { entity.indexes.append(Index(name: properties.joined(separator: "_"), properties: properties)) }
                        for (property, location) in elements { indexElements[name, default: []].append((properties.joined(separator: "_"), property, location)) }
                    }
                case "userInfo":
                    entity.userInfo = userInfo(child)
                case "compositeAttribute":
                    // Part of the entity's version hash: without it, no store of this version is recognised.
                    entity.notImported.append("\(child.attributes["name"] ?? "?") (a composite attribute)")
                    warn("composite attribute \(name).\(child.attributes["name"] ?? "") is not imported: \(Self.compositeCost)", at: child)
                default:
                    warn("<\(child.name)> in entity \(name) is not imported", at: child)
                }
            }
            return entity
        }

        /// Leaves out of each index the elements on to-many relationships, own or inherited, with a
        /// warning at each (and the index, when nothing else is in it). Xcode takes them and Core
        /// Data opens stores of such models (Wikipedia's app ships one), but a to-many has no
        /// column in its entity's table to index: its links are rows of another table.
        mutating func leaveOutToManyIndexElements(of schema: inout Schema) {
            for position in schema.entities.indices {
                let entity = schema.entities[position]
                let toMany = Set(schema.allRelationships(of: entity).filter(\.isToMany).map(\.name))
                guard !toMany.isEmpty, entity.indexes.contains(where: { !toMany.isDisjoint(with: $0.properties) }) else { continue }
                var kept: [Index] = []
                for var index in entity.indexes {
                    let left = index.properties.filter { !toMany.contains($0) }
                    for property in index.properties where toMany.contains(property) {
                        let location = indexElements[entity.name]?.first { $0.index == index.name && $0.property == property }?.location ?? entity.location ?? FileLocation(path: path, line: 1, column: 1)
                        warnings.append(.warning("fetch index \(entity.name).\(index.name): the element on to-many relationship '\(property)' is not imported: a to-many relationship has no column "
                                                 + "in \(entity.name)'s table to index (its links are rows of another table)"
                                                 + (left.isEmpty ? "; the index has no other element and is not imported" : "; the index keeps its other elements"), at: location))
                    }
                    index.properties = left
                    if !left.isEmpty { kept.append(index) }
                }
                schema.entities[position].indexes = kept
            }
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
                fail("an attribute of \(entity) without a name", at: node, fix: "give it a name in Xcode's model editor (Core Data refuses a property without one)")
                return nil
            }
            let what = "attribute \(entity).\(name)"
            let typeName = node.attributes["attributeType"] ?? "Undefined"
            guard let type = Self.types[typeName] else {
                switch typeName {
                case "Object ID": warn("\(what) (Object ID) is not imported: object IDs are not stored values", at: node)
                case "Undefined":
                    // Core Data allows no type only on a transient attribute (which stores nothing).
                    if flag(node, "transient") { warn("\(what) has no type (Undefined) and is transient: not imported (it stores nothing)", at: node) } else {
                        fail("\(what) has no type (Undefined) and is not transient", at: node, fix: "choose its type in Xcode's model editor (Core Data allows no type only on a transient attribute)")
                    }
                case "Composite": warn("\(what) is a composite attribute and is not imported: \(Self.compositeCost)", at: node)
                default:
                    let known = Self.types.keys.sorted() + ["Object ID", "Composite", "Undefined"]
                    fail("\(what) has the unknown type '\(typeName)'", at: node, fix: Suggestions.didYouMean(typeName, in: known) ?? "use one of Xcode's types (\(Self.types.keys.sorted().joined(separator: ", ")))")
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
                attribute.derivation = node.attributes["derivationExpression"] ?? ""
                warn("\(what) is derived (\(attribute.derivation ?? "")): imported as a stored attribute with its derivation recorded, which mapc does not compute", at: node)
            }
            if type == .date {
                if let seconds = nonEmpty(node, "defaultDateTimeInterval") {
                    switch date(seconds) {
                    case .success(let value): attribute.defaultValue = value
                    case .failure(let problem): warn("\(what): the default date '\(seconds)' is not imported: \(problem.message)", at: node)
                    }
                }
                for (key, bound) in [("minDateTimeInterval", 0), ("maxDateTimeInterval", 1)] {
                    guard let text = nonEmpty(node, key) else { continue }
                    switch date(text) {
                    case .success(let value):
                        if bound == 0 { attribute.validation.min = value } else { attribute.validation.max = value }
                    case .failure(let problem):
                        warn("\(what): \(key) '\(text)' is not imported: \(problem.message)", at: node)
                    }
                }
            } else if let text = node.attributes["defaultValueString"] {
                if let value = defaultValue(text, type: type) {
                    attribute.defaultValue = value
                } else {
                    // Without it a required attribute has no default, which `check` later refuses in
                    // a step adding it: said here, where the value can be written.
                    let required = attribute.isOptional || attribute.isTransient ? ""
                        : "; the attribute is required and has no default then, so a step that adds it or makes it required cannot be inferred for a store holding objects of the entity: "
                        + "write the value the app expects as its `default:` in this version's schema file"
                    warn("\(what): the default '\(text)' is not \(English.withArticle(type.rawValue)) and is not imported\(required)", at: node)
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
                // Screened as a schema file's `regex:` is (it was found only when the version was
                // read back, and said as mapc's fault): the model's own mistake, at its element.
                if type == .string, let problem = RegexGuard.problem(with: regex) {
                    fail("\(what): its regular expression is refused: \(problem)", at: node, fix: RegexGuard.fix(for: problem))
                } else if type == .string { attribute.validation.regex = regex } else {
                    warn("\(what): a regular expression on a \(type.rawValue) attribute is not imported", at: node)
                }
            }
            for child in node.children {
                if child.name == "userInfo" { attribute.userInfo = userInfo(child) } else { warn("<\(child.name)> in \(what) is not imported", at: child) }
            }
            return attribute
        }

        /// A default value or bound written by Xcode's editor, read for the attribute's type as
        /// every value of that type is read from text (`ValueParser`: `YES`/`NO`, a whole number
        /// written with a point kept exact, the type's range). Dates are seconds (`date(_:)`);
        /// binary data has no text form in a model.
        private func defaultValue(_ text: String, type: AttributeType) -> Value? {
            switch type {
            case .date, .binary, .transformable: return nil
            default: return try? ValueParser.parse(text, as: type).get()
            }
        }

        /// A date as Xcode's model writes it (seconds from 2001-01-01), within the years stores
        /// hold (`ValueLimits`): past them, it was made 1970 without a word.
        private func date(_ text: String) -> Result<Value, ValueProblem> {
            guard let interval = Double(text.trimmingCharacters(in: .whitespaces)), interval.isFinite else {
                return .failure(ValueProblem("it is not a number of seconds"))
            }
            guard let instant = Timestamp(seconds: interval, since: .reference) else {
                return .failure(ValueProblem(ValueLimits.dateProblem(interval + Double(Timestamp.Epoch.reference.offset))))
            }
            if let problem = ValueLimits.problem(.date(instant), for: .date) { return .failure(ValueProblem(problem)) }
            return .success(.date(instant))
        }

        static let deleteRules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]

        mutating func relationship(_ node: XMLNode, entity: String) -> Relationship? {
            guard let name = nonEmpty(node, "name") else {
                fail("a relationship of \(entity) without a name", at: node, fix: "give it a name in Xcode's model editor (Core Data refuses a property without one)")
                return nil
            }
            let what = "relationship \(entity).\(name)"
            guard let destination = nonEmpty(node, "destinationEntity") else {
                fail("\(what) has no destination entity", at: node, fix: "choose its destination in Xcode's model editor (Core Data refuses a relationship without one)")
                return nil
            }
            // `indexed`: both formats index a to-one's key column whatever the model says, and a
            // to-many has no column to index.
            reportUnknown(node, known: ["name", "destinationEntity", "inverseName", "optional", "toMany", "ordered", "minCount", "maxCount",
                                        "transient", "elementID", "versionHashModifier", "indexed"], what: what)
            var relationship = Relationship(name: name, destination: destination, isToMany: flag(node, "toMany"), isOrdered: flag(node, "ordered"),
                                            inverse: nonEmpty(node, "inverseName"), isOptional: flag(node, "optional"))
            relationship.location = node.location
            // Xcode's editor has said so already; the schema file says it is on purpose.
            relationship.declaresNoInverse = relationship.inverse == nil
            relationship.isTransient = flag(node, "transient")
            relationship.renamingIdentifier = nonEmpty(node, "elementID")
            relationship.versionHashModifier = nonEmpty(node, "versionHashModifier")
            let rule = node.attributes["deletionRule"] ?? "Nullify"
            if let known = Self.deleteRules[rule] { relationship.deleteRule = known } else {
                fail("\(what): the delete rule '\(rule)' is unknown", at: node, fix: Suggestions.didYouMean(rule, in: Self.deleteRules.keys.sorted()) ?? "use one of \(Self.deleteRules.keys.sorted().joined(separator: ", "))")
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
