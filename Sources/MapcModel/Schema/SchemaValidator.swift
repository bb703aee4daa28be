import Foundation
internal import Yams
import MapcFoundation

/// The semantic checks on a schema that has been read: names, inheritance, relationships and
/// their inverses, validation rules, constraints. Every problem becomes a diagnostic pointing at
/// the text that causes it.
package struct SchemaValidator {
    /// The deepest inheritance accepted (`Schema` keeps chains only so long).
    static let maxInheritanceDepth = Schema.maxInheritanceDepth
    /// The most properties a schema's entities may hold counting each one's inherited ones: what
    /// inference, hashes and checks work through (a parent of 2,000 attributes under 10,000
    /// sub-entities is 20 million, which exhausted memory). Real models hold a few thousand.
    static let maxEffectiveProperties = 200_000
    let schema: Schema
    let document: YAMLDocument?
    private var diagnostics: [Diagnostic] = []

    /// Each entity's pair under `entities:`, by name (the first of a name): found once, where a
    /// scan per lookup made a schema of many entities with problems quadratic.
    private let entityNodes: [String: (key: Node, value: Node)]

    package init(schema: Schema, document: YAMLDocument?) {
        self.schema = schema
        self.document = document
        var nodes: [String: (key: Node, value: Node)] = [:]
        if let root = document?.root, let entities = Self.pair("entities", in: root)?.value.mapping {
            for (key, value) in entities {
                if let name = key.scalar?.string, nodes[name] == nil { nodes[name] = (key, value) }
            }
        }
        entityNodes = nodes
    }

    package mutating func validate() -> [Diagnostic] {
        checkEntityNames()
        // A schema too large to work through is refused before the checks that work through it.
        let inheritance = checkInheritance(), sized = checkEffectiveSize()
        let acyclic = inheritance && sized
        for entity in schema.entities {
            // An entity whose own chain of parents is whole is checked whatever another's is:
            // every problem at once, not one more after each fix.
            let whole = acyclic || (sized && hasWholeAncestry(entity))
            checkProperties(of: entity, acyclic: whole)
            for attribute in entity.attributes { checkAttribute(attribute, in: entity) }
            for relationship in entity.relationships { checkRelationship(relationship, in: entity) }
            if whole { checkConstraints(of: entity) }
        }
        if acyclic { checkAbstractEntities() }
        return diagnostics
    }

    // MARK: Positions

    /// A place in the file: where a node starts and how many columns its text spans.
    struct Place {
        var location: FileLocation
        var length: Int
    }

    /// The node under `entities:` (entity, then section, property and key), falling back to the
    /// nearest node that exists.
    private func location(_ path: String...) -> Place? {
        locate(path, keyOnly: false)
    }

    /// The key itself (the name) rather than its value.
    private func keyLocation(_ path: String...) -> Place? {
        locate(path, keyOnly: true)
    }

    /// The pair of a mapping whose key is the scalar `name`. Compared as text: Yams' own lookup
    /// compares nodes, resolving each key's tag with regular expressions, which dominated the
    /// loading of a long history (docs/performance.md).
    private static func pair(_ name: String, in node: Node) -> (key: Node, value: Node)? {
        node.mapping?.first { $0.key.scalar?.string == name }
    }

    private func locate(_ path: [String], keyOnly: Bool) -> Place? {
        guard let document, let root = document.root, var node = Self.pair("entities", in: root)?.value else { return modelLocation(path) }
        var best = Place(location: document.location(of: node), length: 1)
        for (depth, component) in path.enumerated() {
            guard let (key, value) = depth == 0 ? entityNodes[component] : Self.pair(component, in: node) else { break }
            let target = (keyOnly && depth == path.count - 1) ? key : value
            best = Place(location: document.location(of: target), length: YAMLDocument.length(of: target))
            node = value
        }
        return best
    }

    /// Without a YAML document (a model imported from Xcode's files), where the entity or property
    /// the path names is written in the model: `[entity, section, property, …]`.
    private func modelLocation(_ path: [String]) -> Place? {
        guard let entityName = path.first, let entity = schema.entity(named: entityName) else { return nil }
        if path.count >= 3 {
            if let attribute = entity.attributes.first(where: { $0.name == path[2] }), let location = attribute.location { return Place(location: location, length: 1) }
            if let relationship = entity.relationships.first(where: { $0.name == path[2] }), let location = relationship.location { return Place(location: location, length: 1) }
        }
        return entity.location.map { Place(location: $0, length: 1) }
    }

    /// The first scalar spelling `name` inside the node at `path` (a property named in a list).
    private func scalar(_ name: String, under path: String...) -> Place? {
        guard let document, let first = path.first, var node = entityNodes[first]?.value else { return nil }
        for component in path.dropFirst() {
            guard let value = Self.pair(component, in: node)?.value else { return nil }
            node = value
        }
        // A queue read from its front by index: removing the first element moved every other.
        var pending = [node]
        var next = 0
        while next < pending.count, next < 10_000 {
            let current = pending[next]
            next += 1
            if let scalar = current.scalar, scalar.string == name {
                return Place(location: document.location(of: current), length: YAMLDocument.length(of: current))
            }
            if let sequence = current.sequence { pending += sequence }
            if let mapping = current.mapping { pending += mapping.map(\.value) }
        }
        return nil
    }

    private mutating func error(_ message: String, at place: Place?, length: Int = 1, fix: String? = nil) {
        diagnostics.append(.error(message, at: place?.location ?? fallback, length: max(length, place?.length ?? 1), fix: fix))
    }

    private mutating func warning(_ message: String, at place: Place?, length: Int = 1, fix: String? = nil) {
        diagnostics.append(.warning(message, at: place?.location ?? fallback, length: max(length, place?.length ?? 1), fix: fix))
    }

    private var fallback: FileLocation? {
        schema.source.map { FileLocation(path: $0.path, line: 1, column: 1) }
    }

    // MARK: Entities

    private mutating func checkEntityNames() {
        // A schema file cannot declare one twice (YAML refuses the key); a model read from
        // elsewhere (Xcode's) can: it was found only when the version was read back.
        var seen: Set<String> = []
        for entity in schema.entities where !seen.insert(entity.name).inserted {
            error("duplicate entity name '\(entity.name)'", at: entity.location.map { Place(location: $0, length: entity.name.count) } ?? keyLocation(entity.name),
                  length: entity.name.count, fix: "rename or remove one: entities are found by name")
        }
        // An entity named in lowercase (`sourceFile`) is Core Data's to read as any other: Xcode's
        // editor asks for an uppercase letter, but real models have both cases, and the name is
        // part of the entity's version hash: renamed, no store of the app matches.
        for entity in schema.entities {
            if let first = entity.name.first, !first.isLetter {
                let letters = entity.name.drop { !$0.isLetter }
                error("entity name '\(entity.name)' must start with a letter", at: entity.location.map { Place(location: $0, length: entity.name.count) } ?? keyLocation(entity.name),
                      length: entity.name.count, fix: letters.isEmpty ? "begin it with a letter (A-Z)" : "rename it '\(letters.prefix(1).uppercased() + letters.dropFirst())'")
            }
        }
    }

    /// Reports unknown parents and inheritance cycles; returns whether the hierarchy is sound.
    private mutating func checkInheritance() -> Bool {
        var sound = true
        let names = schema.entities.map(\.name)
        for entity in schema.entities {
            guard let parent = entity.parent else { continue }
            if schema.entity(named: parent) == nil {
                error("unknown parent entity '\(parent)' of '\(entity.name)'", at: location(entity.name, "parent"), length: parent.count,
                      fix: Suggestions.didYouMean(parent, in: names) ?? "declare '\(parent)' under 'entities:' or remove 'parent:'")
                sound = false
            }
        }
        // Cycles and depth from the schema's cached chains: linear in the size of the hierarchy.
        var reported: Set<String> = []
        for entity in schema.entities {
            let chain = schema.ancestry(of: entity)
            if chain.count == Self.maxInheritanceDepth + 1 {
                error("inheritance is more than \(Self.maxInheritanceDepth) levels deep at '\(entity.name)'", at: location(entity.name, "parent"), length: entity.parent?.count ?? 1,
                      fix: "flatten the hierarchy; Core Data models rarely need more than a few levels")
                sound = false
            }
            guard let last = chain.last, let parentName = last.parent, schema.entity(named: parentName) != nil,
                  let start = chain.firstIndex(where: { $0.name == parentName }) else { continue }
            let cycle = chain[start...].map(\.name) + [parentName]
            if reported.insert(Set(cycle).sorted().joined(separator: ",")).inserted {
                error("inheritance cycle: \(cycle.joined(separator: " -> "))", at: location(entity.name, "parent"), length: parentName.count,
                      fix: "an entity cannot be its own ancestor; remove one of the 'parent:' lines")
            }
            sound = false
        }
        return sound
    }

    /// Whether the entity's parents are all declared, end in a root and are not too deep.
    private func hasWholeAncestry(_ entity: Entity) -> Bool {
        let chain = schema.ancestry(of: entity)
        return chain.count <= Self.maxInheritanceDepth && chain.last?.parent == nil
    }

    /// Refuses a schema whose entities, with their inherited properties, hold more than
    /// `maxEffectiveProperties`: counted from each entity's chain, without building the lists.
    private mutating func checkEffectiveSize() -> Bool {
        var total = 0
        for entity in schema.entities {
            total += schema.ancestry(of: entity).reduce(0) { $0 + $1.attributes.count + $1.relationships.count }
            if total > Self.maxEffectiveProperties {
                let widest = schema.entities.max { $0.attributes.count + $0.relationships.count < $1.attributes.count + $1.relationships.count }
                error("the entities hold more than \(Self.maxEffectiveProperties) properties counting each sub-entity's inherited ones; mapc works through each of them",
                      at: widest.flatMap { entity in entity.location.map { Place(location: $0, length: entity.name.count) } },
                      fix: "this is far beyond a real model; split the hierarchy, or move properties from '\(widest?.name ?? "the parent")' to the sub-entities that use them")
                return false
            }
        }
        return true
    }

    private mutating func checkAbstractEntities() {
        for entity in schema.entities where entity.isAbstract {
            let concrete = schema.hierarchy(under: entity).contains { !$0.isAbstract }
            guard !concrete else { continue }
            let required = schema.entities.flatMap { source in source.relationships.filter { $0.destination == entity.name && !$0.isOptional }.map { (source, $0) } }
            if let (source, relationship) = required.first {
                // Core Data accepts the model: a store of it holds no such object, and a run says
                // so of any it is given.
                warning("abstract entity '\(entity.name)' has no concrete sub-entity, so the required relationship '\(source.name).\(relationship.name)' can never be filled: no '\(source.name)' object is valid",
                      at: entity.location.map { Place(location: $0, length: entity.name.count) }, length: entity.name.count,
                      fix: "add a sub-entity with 'parent: \(entity.name)', make '\(entity.name)' concrete, or make the relationship optional")
            } else {
                warning("abstract entity '\(entity.name)' has no concrete sub-entity; it can have no objects", at: entity.location.map { Place(location: $0, length: entity.name.count) }, length: entity.name.count,
                        fix: "add a sub-entity with 'parent: \(entity.name)' or remove 'abstract: true'")
            }
        }
    }

    // MARK: Properties

    private mutating func checkProperties(of entity: Entity, acyclic: Bool) {
        // Each name with the section it was first seen in: the fix says which clash it is.
        var seen: [String: String] = [:]
        let properties: [(name: String, section: String)] = entity.attributes.map { ($0.name, "attributes") } + entity.relationships.map { ($0.name, "relationships") }
        for property in properties {
            // Found only for a problem to report: most properties have none.
            var at: Place? { keyLocation(entity.name, property.section, property.name) }
            if let first = seen[property.name] {
                error("duplicate property name '\(property.name)' in '\(entity.name)'", at: at, length: property.name.count,
                      fix: first == property.section ? "two \(property.section) cannot share a name; rename or remove one" : "an attribute and a relationship cannot share a name; rename one")
            } else {
                seen[property.name] = property.section
            }
            // A property named with a capital (OpenEmu's `Image.URL` and `Image.Box`) is Core
            // Data's to read as any other, as an entity's lowercase name is; `_opt` (from a model
            // built in code: files hold identifiers only) loses what comes before its first letter.
            if let first = property.name.first, !first.isLetter {
                let letters = property.name.drop { !$0.isLetter }
                let renamed = letters.prefix(1).lowercased() + letters.dropFirst()
                error("property name '\(property.name)' must start with a letter", at: at, length: property.name.count,
                      fix: renamed.isEmpty ? "begin it with a letter (a-z)" : "rename it '\(renamed)'")
            }
            if acyclic, let parentName = entity.parent, let parent = schema.entity(named: parentName),
               let inherited = schema.ancestry(of: parent).first(where: { ancestor in
                   ancestor.attributes.contains { $0.name == property.name } || ancestor.relationships.contains { $0.name == property.name }
               }) {
                error("'\(entity.name).\(property.name)' shadows the property inherited from '\(inherited.name)'", at: at, length: property.name.count,
                      fix: "remove it from '\(entity.name)' (it is inherited) or give it another name")
            }
        }
    }

    private mutating func checkAttribute(_ attribute: Attribute, in entity: Entity) {
        let rules = attribute.validation
        let what = "'\(entity.name).\(attribute.name)'"
        if let min = rules.min, let max = rules.max, Value.compare(min, max) == .orderedDescending {
            error("min \(min.description(as: attribute.type)) is above max \(max.description(as: attribute.type)) for \(what)", at: location(entity.name, "attributes", attribute.name, "min"), fix: "swap them or correct one")
        }
        if let min = rules.minLength, let max = rules.maxLength, min > max {
            error("minLength \(min) is above maxLength \(max) for \(what)", at: location(entity.name, "attributes", attribute.name, "minLength"), fix: "swap them or correct one")
        }
        guard let value = attribute.defaultValue else { return }
        var at: Place? { location(entity.name, "attributes", attribute.name, "default") }
        // Core Data accepts such a model (Xcode compiles it; a default 0 beside a minimum is common)
        // and refuses an object left at the default when it is saved: so does a run, naming it.
        if let problem = AttributeValidator.violation(of: value, for: attribute) {
            warning("default \(value.description(as: attribute.type)) of \(what) breaks its own validation: \(problem); an object left at its default fails validation, as Core Data refuses it when saved",
                    at: at, fix: "change the default or the rule, or give every object a value")
        }
    }

    private mutating func checkRelationship(_ relationship: Relationship, in entity: Entity) {
        let what = "'\(entity.name).\(relationship.name)'"
        let names = schema.entities.map(\.name)
        if !relationship.isToMany {
            if relationship.isOrdered {
                error("\(what) is ordered but not to-many", at: keyLocation(entity.name, "relationships", relationship.name, "ordered"),
                      fix: "add 'toMany: true' or remove 'ordered:'")
            }
            // Counts on a to-one are kept for Core Data's hash (Xcode writes minCount 1, maxCount 1).
            if let max = relationship.maxCount, max != 1 {
                error("a to-one relationship holds at most one object: maxCount \(max) does not fit \(what)",
                      at: keyLocation(entity.name, "relationships", relationship.name, "maxCount"), fix: "add 'toMany: true', or write maxCount: 1 (or leave it out)")
            }
            if let min = relationship.minCount, min > 1 {
                error("a to-one relationship holds at most one object: minCount \(min) does not fit \(what)",
                      at: keyLocation(entity.name, "relationships", relationship.name, "minCount"), fix: "add 'toMany: true', or write minCount: 0 or 1")
            }
        }
        if let min = relationship.minCount, let max = relationship.maxCount, max > 0, min > max {
            error("minCount \(min) is above maxCount \(max) for \(what)", at: location(entity.name, "relationships", relationship.name, "minCount"))
        }
        guard let destination = schema.entity(named: relationship.destination) else {
            error("unknown destination entity '\(relationship.destination)' of \(what)", at: location(entity.name, "relationships", relationship.name, "destination"),
                  length: relationship.destination.count, fix: Suggestions.didYouMean(relationship.destination, in: names) ?? "declare it under 'entities:'")
            return
        }
        guard let inverseName = relationship.inverse else {
            guard !relationship.declaresNoInverse else { return }
            warning("\(what) has no inverse; objects on the other side cannot find their way back and integrity is not kept",
                    at: keyLocation(entity.name, "relationships", relationship.name), length: relationship.name.count,
                    fix: "add a relationship on '\(destination.name)' and name each as the other's 'inverse:', or say 'inverse: null' when it has none on purpose")
            return
        }
        var inverseAt: Place? { location(entity.name, "relationships", relationship.name, "inverse") }
        guard let inverseProperty = schema.property(named: inverseName, in: destination) else {
            let candidates = schema.allRelationships(of: destination).map(\.name)
            error("inverse '\(inverseName)' of \(what) is not a relationship of '\(destination.name)'", at: inverseAt, length: inverseName.count,
                  fix: Suggestions.didYouMean(inverseName, in: candidates) ?? "add relationship '\(inverseName)' to '\(destination.name)'")
            return
        }
        guard case .relationship(let inverse) = inverseProperty else {
            error("inverse '\(inverseName)' of \(what) is an attribute of '\(destination.name)', not a relationship", at: inverseAt, length: inverseName.count)
            return
        }
        let ownAncestry = schema.ancestry(of: entity).map(\.name)
        if relationship.isToMany && inverse.isToMany && inverseName == relationship.name && schema.ancestry(of: destination).contains(where: { $0.name == entity.name }) {
            // Xcode warns, Core Data accepts it: each link is kept both ways, one row each.
            warning("\(what) is its own inverse (a symmetric to-many, such as friends): Xcode warns about it; mapc keeps each link both ways",
                    at: inverseAt, length: inverseName.count,
                    fix: "two to-many relationships that are each other's inverse (such as 'friends' and 'friendOf') say the same without the warning")
        } else if !ownAncestry.contains(inverse.destination) {
            error("inverse pair does not match: \(what) names '\(destination.name).\(inverseName)' as inverse, but that relationship leads to '\(inverse.destination)', not '\(entity.name)'",
                  at: inverseAt, length: inverseName.count, fix: "point both relationships at each other's entity")
        } else if inverse.inverse != relationship.name {
            // The other side's inverse names no relationship: its own error says so, and this would repeat it.
            if let named = inverse.inverse, let back = schema.entity(named: inverse.destination) {
                guard case .relationship? = schema.property(named: named, in: back) else { return }
            }
            // Xcode warns, Core Data accepts it and wrote stores with such models: each side is kept as declared.
            let other = "'\(destination.name).\(inverseName)'"
            let said = inverse.inverse.map { "names '\($0)' as its inverse" } ?? "names no inverse"
            // Where the other side pairs with another relationship that names it back, pointing it
            // here would break that pair (and the warning would move to it): this side needs its own.
            var partnerName: String?
            if let named = inverse.inverse, let back = schema.entity(named: inverse.destination),
               case .relationship(let partner)? = schema.property(named: named, in: back), partner.inverse == inverseName {
                partnerName = "\(back.name).\(named)"
            }
            let fix = partnerName.map { "\(other) pairs with '\($0)' already: give \(what) an inverse of its own (a new relationship of '\(destination.name)' naming '\(relationship.name)' as its inverse), or 'inverse: null'" }
                ?? "set 'inverse: \(relationship.name)' on \(other)"
            warning("inverse pair does not point at each other: \(what) names \(other) as inverse, but \(other) \(said); Core Data accepts this with a warning, and mapc keeps each side as declared",
                    at: inverseAt, length: inverseName.count, fix: fix)
        }
    }

    private mutating func checkConstraints(of entity: Entity) {
        guard !entity.uniquenessConstraints.isEmpty || !entity.indexes.isEmpty else { return }
        let available = Set(schema.propertyNames(of: entity))
        for (index, constraint) in entity.uniquenessConstraints.enumerated() {
            for name in constraint { checkConstrainedProperty(name, in: entity, available: available, kind: "uniqueness constraint \(index + 1)", key: "uniquenessConstraints") }
        }
        for index in entity.indexes {
            for name in index.properties { checkConstrainedProperty(name, in: entity, available: available, kind: "index '\(index.name)'", key: "indexes") }
        }
    }

    private mutating func checkConstrainedProperty(_ name: String, in entity: Entity, available: Set<String>, kind: String, key: String) {
        // Found in the file only for an error: a search per property named made a thousand
        // constraints take minutes.
        func at() -> Place? { scalar(name, under: entity.name, key) ?? location(entity.name, key) }
        guard available.contains(name) else {
            error("\(kind) of '\(entity.name)' names unknown property '\(name)'", at: at(), fix: Suggestions.didYouMean(name, in: available))
            return
        }
        switch schema.property(named: name, in: entity) {
        case .relationship(let relationship)? where relationship.isToMany:
            error("\(kind) of '\(entity.name)' names to-many relationship '\(name)'; only attributes and to-one relationships can be constrained or indexed", at: at())
        case .attribute(let attribute)? where attribute.isTransient:
            error("\(kind) of '\(entity.name)' names transient attribute '\(name)', which is not stored", at: at())
        default: break
        }
    }
}

/// Checks one attribute value against the attribute's type and validation rules.
package enum AttributeValidator {
    /// A description of the broken rule, or nil when the value is acceptable. Null is acceptable
    /// here; whether a value is required is checked by the caller.
    package static func violation(of value: Value, for attribute: Attribute) -> String? {
        violations(of: value, for: attribute).first
    }

    /// Every rule the value breaks, in the order the schema lists them (so one report names them all).
    package static func violations(of value: Value, for attribute: Attribute) -> [String] {
        if value.isNull { return [] }
        let rules = attribute.validation
        var broken: [String] = []
        if let min = rules.min, let order = Value.compare(value, min), order == .orderedAscending { broken.append("below min \(min.description(as: attribute.type))") }
        if let max = rules.max, let order = Value.compare(value, max), order == .orderedDescending { broken.append("above max \(max.description(as: attribute.type))") }
        return broken + textViolations(value, rules)
    }

    /// Every length and pattern rule a text value breaks; none for other values. Text whose
    /// bytes are not UTF-8 breaks every such rule there is, having no characters to count or match.
    package static func textViolations(_ value: Value, _ rules: Validation) -> [String] {
        switch value {
        case .string(let text): return textViolations(text, rules)
        case .nonUTF8Text:
            guard rules.minLength != nil || rules.maxLength != nil || rules.regex != nil else { return [] }
            return ["text whose bytes are not UTF-8 has no length or pattern to check (minLength, maxLength, regex)"]
        default: return []
        }
    }

    /// Every length and pattern rule a text value breaks (lengths in UTF-16 units, as Core Data counts).
    package static func textViolations(_ text: String, _ rules: Validation) -> [String] {
        let length = ValueRules.length(of: text)
        var broken: [String] = []
        if let min = rules.minLength, length < min { broken.append("shorter than minLength \(min)") }
        if let max = rules.maxLength, length > max { broken.append("longer than maxLength \(max)") }
        if let pattern = rules.regex {
            switch RegexGuard.match(text, pattern) {
            case .matches: break
            case .doesNotMatch: broken.append("does not match regex '\(pattern)'")
            case .gaveUp: broken.append("cannot be checked against regex '\(pattern)': \(RegexGuard.gaveUpMessage(pattern))")
            }
        }
        return broken
    }
}

