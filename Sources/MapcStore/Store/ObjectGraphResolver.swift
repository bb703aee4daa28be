import Foundation
import MapcFoundation
import MapcModel

/// Validates a set of objects against a schema and settles every relationship from both of its
/// sides, before anything is written.
///
/// A relationship may be given on one side only (the other is derived), or on both, in which
/// case the two must agree. The result holds, for every object and relationship, the final
/// ordered list of related objects.
///
/// Objects may also refer to objects already in a store (`existing` finds them by id). Those are
/// appended after the new objects with their stored relationships; they gain the links the new
/// objects make to them, but a to-one relationship they already have is never changed. Their
/// `related` lists hold only the additions, placed after their `storedCounts` stored objects.
struct ObjectGraphResolver {
    let schema: Schema
    /// The new objects, then the existing objects they refer to.
    private(set) var objects: [ObjectData]
    /// How many of `objects` are new.
    let newCount: Int
    private let existing: ((String) throws -> ObjectData?)?

    /// Attribute values after defaults, by object index.
    private(set) var values: [[String: Value]] = []
    /// Final related object indexes, by object index and relationship name (for existing objects, only what is added).
    private(set) var related: [[String: [Int]]] = []
    /// For existing objects: how many objects each relationship held before, by object index and name.
    private(set) var storedCounts: [[String: Int]] = []
    /// Object index by identity, compared exactly as the store's index compares it.
    private(set) var indexByID: [ExactText: Int] = [:]
    private var problems = ProblemList()

    /// An attribute's default as the store keeps it (Core Data's form of bytes it may keep outside).
    var storedDefault: (Attribute) -> Value? = { $0.defaultValue }

    /// What loading says of an object without an id (a dump's check of itself says it alike).
    static let emptyIDMessage = "the object has an empty id; give every object a unique, non-empty id"

    /// What loading says of an id another object has.
    static func idTakenMessage(_ id: String, by entity: String) -> String {
        "id '\(id)' is already used by \(English.withArticle(entity)) object; ids must be unique in the data"
    }

    /// What loading says of a required relationship that holds nothing.
    static func emptyRequiredMessage(_ relationship: Relationship) -> String {
        "required relationship '\(relationship.name)' is empty; relate \(relationship.isToMany ? "at least one \(relationship.destination)" : "it to \(English.withArticle(relationship.destination))")"
    }

    init(schema: Schema, objects: [ObjectData], existing: ((String) throws -> ObjectData?)? = nil) {
        self.schema = schema
        self.objects = objects
        self.newCount = objects.count
        self.existing = existing
    }

    /// Whether the object at this index was already in the store.
    func isExisting(_ index: Int) -> Bool { index >= newCount }

    /// Finds the ids new objects refer to that are not in the data, in the store.
    private mutating func loadReferencedObjects() throws {
        guard let existing else { return }
        for object in objects.prefix(newCount) {
            for ids in object.relationships.values {
                for id in ids where indexByID[ExactText(id)] == nil {
                    guard let found = try existing(id) else { continue }
                    indexByID[ExactText(id)] = objects.count
                    objects.append(found)
                }
            }
        }
    }

    mutating func resolve() throws {
        for (index, object) in objects.enumerated() where !object.id.isEmpty && indexByID[ExactText(object.id)] == nil { indexByID[ExactText(object.id)] = index }
        try loadReferencedObjects()
        indexByID = [:]
        values = Array(repeating: [:], count: objects.count)
        related = Array(repeating: [:], count: objects.count)
        storedCounts = Array(repeating: [:], count: objects.count)
        var entityOK = Array(repeating: false, count: objects.count)
        // How many of each entity's objects so far had each id: a problem of one is placed at it.
        var seen: [String: [ExactText: Int]] = [:]
        for (index, object) in objects.enumerated() {
            if isExisting(index) {
                indexByID[ExactText(object.id)] = index
                entityOK[index] = schema.entity(named: object.entity) != nil
                storedCounts[index] = object.relationships.mapValues(\.count)
                continue
            }
            let occurrence = seen[object.entity, default: [:]][ExactText(object.id), default: 0]
            seen[object.entity, default: [:]][ExactText(object.id)] = occurrence + 1
            if object.id.isEmpty {
                problems.add(object.entity, nil, "id", Self.emptyIDMessage, occurrence: occurrence)
            } else if ValueLimits.containsNUL(object.id) {
                problems.add(object.entity, object.id.replacingOccurrences(of: "\u{0}", with: "\\u0000"), "id", "an id cannot contain the NUL character (U+0000)")
            } else if let first = indexByID[ExactText(object.id)] {
                problems.add(object.entity, object.id, "id", Self.idTakenMessage(object.id, by: objects[first].entity), occurrence: occurrence)
            } else {
                indexByID[ExactText(object.id)] = index
            }
            guard let entity = schema.entity(named: object.entity) else {
                problems.add(object.entity, object.id, nil, "unknown entity '\(object.entity)' in version \(schema.version)" + (Suggestions.didYouMean(object.entity, in: schema.entities.map(\.name)).map { "; \($0)" } ?? ""))
                continue
            }
            if entity.isAbstract {
                problems.add(object.entity, object.id, nil, "entity '\(entity.name)' is abstract and cannot have objects of its own; list the object under a concrete sub-entity")
                continue
            }
            entityOK[index] = true
            values[index] = checkAttributes(of: object, entity: entity)
        }
        for (index, object) in objects.enumerated() where entityOK[index] && !isExisting(index) {
            checkRelationshipTargets(of: object, at: index)
        }
        settleRelationships(entityOK: entityOK)
        // Existing objects' counts include objects not read here: the store is validated as a whole after the write.
        for (index, object) in objects.enumerated() where entityOK[index] && !isExisting(index) {
            checkCounts(of: object, at: index)
        }
        checkUniqueness(entityOK: entityOK)
        try problems.throwIfAny()
    }

    // MARK: Attributes

    private mutating func checkAttributes(of object: ObjectData, entity: Entity) -> [String: Value] {
        let attributes = schema.allAttributes(of: entity)
        let relationships = schema.allRelationships(of: entity)
        for key in object.attributes.keys.sorted() where !attributes.contains(where: { $0.name == key }) {
            let hint = relationships.contains { $0.name == key } ? "; '\(key)' is a relationship" :
                (Suggestions.didYouMean(key, in: attributes.map(\.name) + relationships.map(\.name)).map { "; \($0)" } ?? "")
            problems.add(object.entity, object.id, key, "unknown attribute '\(key)' of \(entity.name)\(hint)")
        }
        for key in object.relationships.keys.sorted() where !relationships.contains(where: { $0.name == key }) {
            problems.add(object.entity, object.id, key, "unknown relationship '\(key)' of \(entity.name)" + (Suggestions.didYouMean(key, in: relationships.map(\.name)).map { "; \($0)" } ?? ""))
        }
        var result: [String: Value] = [:]
        for attribute in attributes {
            if attribute.isTransient {
                if object.attributes[attribute.name] != nil {
                    problems.add(object.entity, object.id, attribute.name, "attribute '\(attribute.name)' is transient and is not stored; remove it from the data")
                }
                continue
            }
            let value = object.attributes[attribute.name] ?? storedDefault(attribute) ?? .null
            if value.isNull {
                if !attribute.isOptional {
                    problems.add(object.entity, object.id, attribute.name, "required attribute '\(attribute.name)' has no value; give one (it has no default)")
                }
                result[attribute.name] = .null
                continue
            }
            if let mismatch = Self.typeMismatch(value, attribute.type) {
                problems.add(object.entity, object.id, attribute.name, mismatch)
                continue
            }
            for violation in AttributeValidator.violations(of: value, for: attribute) {
                problems.add(object.entity, object.id, attribute.name, "\(violation) (value: \(English.abbreviated("\(value)")))")
            }
            result[attribute.name] = value
        }
        return result
    }

    /// A message when a value's kind does not fit the attribute type.
    static func typeMismatch(_ value: Value, _ type: AttributeType) -> String? {
        if let problem = ValueLimits.problem(value, for: type) { return problem }
        switch (type, value) {
        case (.int16, .integer(let n)), (.int32, .integer(let n)), (.int64, .integer(let n)):
            if case .failure(let problem) = ValueParser.checkRange(n, type) { return problem.message }
            return nil
        case (.double, .double), (.float, .double), (.decimal, .decimal), (.string, .string), (.bool, .bool), (.date, .date),
             (.binary, .binary), (.transformable, .binary), (.uuid, .uuid), (.uri, .uri), (.string, .nonUTF8Text), (.uri, .nonUTF8Text):
            return nil
        default:
            return "expected \(type.rawValue), found \(value)"
        }
    }

    // MARK: Relationships

    private mutating func checkRelationshipTargets(of object: ObjectData, at index: Int) {
        guard let entity = schema.entity(named: object.entity) else { return }
        for relationship in schema.allRelationships(of: entity) {
            guard let ids = object.relationships[relationship.name] else { continue }
            if relationship.isTransient {
                problems.add(object.entity, object.id, relationship.name, "relationship '\(relationship.name)' is transient and is not stored; remove it from the data")
                continue
            }
            if !relationship.isToMany && ids.count > 1 {
                problems.add(object.entity, object.id, relationship.name, "to-one relationship '\(relationship.name)' holds \(ids.count) objects; give one id or null")
            }
            var seen: Set<ExactText> = []
            for id in ids {
                if !seen.insert(ExactText(id)).inserted {
                    problems.add(object.entity, object.id, relationship.name, "id '\(id)' is listed twice")
                    continue
                }
                guard let target = indexByID[ExactText(id)] else {
                    // A Core Data store's object is named by its own entity: `Animal/p2` for a Dog is `Dog/p2`.
                    let named = id.range(of: "/p").flatMap { marker -> String? in
                        guard let parent = schema.entity(named: String(id[..<marker.lowerBound])) else { return nil }
                        let key = id[marker.upperBound...]
                        return schema.hierarchy(under: parent).lazy.map { "\($0.name)/p\(key)" }.first { candidate in
                            candidate != id && (indexByID[ExactText(candidate)] != nil || (try? existing?(candidate)) != nil)
                        }
                    }
                    problems.add(object.entity, object.id, relationship.name, "no object has id '\(id)'\(existing == nil ? "" : " in the data or in the store") (dangling reference)"
                                 + (named.map { "; the object of that key is named '\($0)', by its own entity" } ?? ""))
                    continue
                }
                let allowed = schema.entity(named: relationship.destination).map { schema.hierarchy(under: $0).map(\.name) } ?? []
                if !allowed.contains(objects[target].entity) {
                    problems.add(object.entity, object.id, relationship.name, "'\(id)' is \(English.withArticle(objects[target].entity)), but '\(relationship.name)' leads to \(relationship.destination)")
                }
            }
        }
    }

    /// Computes final lists: as given where given, derived from the inverse where not; and
    /// reports pairs whose two sides disagree.
    private mutating func settleRelationships(entityOK: [Bool]) {
        for (index, object) in objects.enumerated() where entityOK[index] {
            guard let entity = schema.entity(named: object.entity) else { continue }
            for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
                if let ids = object.relationships[relationship.name], !isExisting(index) {
                    related[index][relationship.name] = ids.compactMap { indexByID[ExactText($0)] }.filter { entityOK[$0] }
                } else {
                    related[index][relationship.name] = []
                }
            }
        }
        // Derive each unspecified side from the other side's lists, and check specified sides agree.
        // Membership in a target's list is asked once per object pointing at it: long lists (a
        // tag on every recipe) are asked through sets made once, or the check is quadratic.
        var listed = MembershipCache<String>(), derived = MembershipCache<Int>()
        for (index, object) in objects.enumerated() where entityOK[index] && !isExisting(index) {
            guard let entity = schema.entity(named: object.entity) else { continue }
            for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
                guard let inverse = schema.mutualInverse(of: relationship), object.relationships[relationship.name] != nil else { continue }
                for target in related[index][relationship.name] ?? [] {
                    let targetObject = objects[target]
                    if isExisting(target) {
                        // An object already in the store gains this one, unless that would change a to-one it already has.
                        let stored = targetObject.relationships[inverse.name] ?? []
                        if listed.contains(object.id, in: stored, key: target, inverse.name) { continue }
                        if !inverse.isToMany, let current = stored.first {
                            problems.add(object.entity, object.id, relationship.name,
                                         "\(targetObject.entity) '\(targetObject.id)' in the store already has \(inverse.name) '\(current)'; load adds objects and never changes existing ones")
                        } else if !inverse.isToMany, let other = related[target][inverse.name]?.first, other != index {
                            problems.add(object.entity, object.id, relationship.name,
                                         "\(targetObject.entity) '\(targetObject.id)' in the store can have one \(inverse.name), but '\(objects[other].id)' and '\(object.id)' both claim it")
                        } else if !derived.contains(index, in: related[target][inverse.name] ?? [], key: target, inverse.name) {
                            related[target][inverse.name, default: []].append(index)
                            derived.insert(index, key: target, inverse.name)
                        }
                    } else if let stated = targetObject.relationships[inverse.name] {
                        if !listed.contains(object.id, in: stated, key: target, inverse.name) {
                            problems.add(object.entity, object.id, relationship.name,
                                         "lists '\(targetObject.id)', but \(targetObject.entity) '\(targetObject.id)'.\(inverse.name) does not list '\(object.id)'; the inverse relationships disagree")
                        }
                    } else if !derived.contains(index, in: related[target][inverse.name] ?? [], key: target, inverse.name) {
                        related[target][inverse.name, default: []].append(index)
                        derived.insert(index, key: target, inverse.name)
                    }
                }
            }
        }
    }

    private mutating func checkCounts(of object: ObjectData, at index: Int) {
        guard let entity = schema.entity(named: object.entity) else { return }
        for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
            let count = related[index][relationship.name]?.count ?? 0
            if !relationship.isToMany {
                if count > 1 && object.relationships[relationship.name] == nil {
                    problems.add(object.entity, object.id, relationship.name, "to-one relationship '\(relationship.name)' is named as inverse by \(count) objects; at most one may point here")
                }
            }
            for rule in RelationshipCountRule.rules(of: relationship) where rule.isBroken(by: count) {
                // As a store's validation words it (`StoreValidator`), with a fix for the empty one.
                problems.add(object.entity, object.id, relationship.name, rule == .required
                    ? Self.emptyRequiredMessage(relationship)
                    : rule.summary + (rule.shown(count: "\(count)").map { " (\($0))" } ?? ""))
            }
        }
    }

    private mutating func checkUniqueness(entityOK: [Bool]) {
        for entity in schema.entities {
            for constraint in entity.uniquenessConstraints {
                let members = Set(schema.hierarchy(under: entity).map(\.name))
                var seen: [[AnyHashable]: String] = [:]
                for (index, object) in objects.enumerated() where entityOK[index] && !isExisting(index) && members.contains(object.entity) {
                    // A constrained relationship holding no object counts as a nil.
                    let constrained = constraint.map { name in values[index][name] ?? related[index][name]?.first.map { .string(objects[$0].id) } ?? .null }
                    guard Entity.constraintApplies(to: constrained) else { continue }
                    let key = constraint.map { name -> AnyHashable in
                        if let value = values[index][name] { return Entity.constraintKey(of: value) }
                        // The related objects themselves (their places here), not their ids' text.
                        return AnyHashable(related[index][name] ?? [])
                    }
                    if let other = seen[key] {
                        let shared = constraint.map { name in "\(name) \(values[index][name].map(\.description) ?? "[" + (related[index][name]?.map { objects[$0].id }.joined(separator: ", ") ?? "") + "]")" }
                        problems.add(object.entity, object.id, constraint.joined(separator: ","),
                                     "breaks the uniqueness constraint (\(constraint.joined(separator: ", "))) of \(entity.name): object '\(other)' has the same \(shared.joined(separator: ", "))")
                    } else {
                        seen[key] = object.id
                    }
                }
            }
        }
    }
}

/// Whether a list holds an element, asked of the same lists many times: a short list is searched,
/// a long one through a set made on its first question and kept up to date by `insert`.
private struct MembershipCache<Element: Hashable> {
    /// Lists up to this long are searched rather than hashed.
    private static var searchedUpTo: Int { 16 }
    private var sets: [Int: [String: Set<Element>]] = [:]

    /// Whether `list` (the list of object `key`'s relationship `name`) holds `element`.
    mutating func contains(_ element: Element, in list: [Element], key: Int, _ name: String) -> Bool {
        if let set = sets[key]?[name] { return set.contains(element) }
        guard list.count > Self.searchedUpTo else { return list.contains(element) }
        let set = Set(list)
        sets[key, default: [:]][name] = set
        return set.contains(element)
    }

    /// Records that `element` was appended to that list.
    mutating func insert(_ element: Element, key: Int, _ name: String) {
        sets[key]?[name]?.insert(element)
    }
}
