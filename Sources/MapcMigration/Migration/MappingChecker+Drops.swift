import MapcFoundation
import MapcModel

/// What a mapping drops: source properties holding values that no expression reads are lost, as
/// an inferred step's removals are (which `run` refuses unless the loss is accepted). A mapping
/// file says so on purpose by listing them under `drops:`; any other is a warning.
extension MappingChecker {
    /// The mappings that read an entity's objects as their own: those with a source entity that
    /// may read them (`MigrationAnalysis.entitiesRead`, the one rule: the source's objects, and
    /// with a source expression the sub-entities' its fetch includes). An `add` mapping's fetch
    /// reads objects too, but makes new ones of them: it keeps none.
    package static func readers(of entity: Entity, in source: Schema, among entityMappings: [EntityMapping]) -> [EntityMapping] {
        entityMappings.filter { mapping in
            mapping.source != nil && MigrationAnalysis.entitiesRead(by: mapping, in: source).contains(entity.name)
        }
    }

    /// The properties a mapping's `drops:` may name: the stored properties of its source entity,
    /// and of its sub-entities when a source expression reads their objects too.
    static func droppable(by entityMapping: EntityMapping, in source: Schema) -> Set<String> {
        guard let name = entityMapping.source, let entity = source.entity(named: name) else { return [] }
        let entities = entityMapping.sourceExpression == nil ? [entity] : source.hierarchy(under: entity)
        return Set(entities.flatMap { storedProperties(of: $0, in: source) })
    }

    /// Whether this file speaks for its step about what the step drops: a file that is the whole
    /// step, or the first pass of a step checked with its other passes (`companions`). A pass
    /// checked alone says nothing of it: what it leaves, another pass may read.
    var judgesTheStep: Bool {
        guard let pass = mapping.pass else { return true }
        return !companions.isEmpty && !companions.contains { ($0.pass ?? 1) < pass }
    }

    /// Each name under `drops:` must be a stored property of the objects the mapping reads.
    mutating func checkDrops(source: Schema) {
        for entityMapping in mapping.entityMappings where entityMapping.isReadWhole && !entityMapping.drops.isEmpty {
            guard let name = entityMapping.source, let entity = source.entity(named: name) else { continue }
            let stored = Self.droppable(by: entityMapping, in: source)
            for dropped in entityMapping.drops where !stored.contains(dropped) {
                let what = source.property(named: dropped, in: entity) == nil ? "which \(name) in \(source.version) does not have" : "which \(name) in \(source.version) does not store (it is transient)"
                error("'drops:' names '\(dropped)', \(what)", at: entityMapping.location(of: "drops.\(dropped)"), length: dropped.count,
                      fix: Suggestions.didYouMean(dropped, in: stored.sorted()) ?? "list properties of \(name) whose values the mapping drops on purpose")
            }
        }
    }

    /// What the step's expressions read of the source: properties ("Entity.name"), and entities
    /// whose objects are read whole (a custom policy's source and what it leads to, objects
    /// handed to a policy's function, an expression using the source object as a whole).
    struct SourceReads {
        var properties: Set<String> = []
        /// Relationships whose value some expression takes whole (`Entity.name`): a relationship
        /// only followed further, or counted, carries none of its links.
        var links: Set<String> = []
        /// Entities whose objects are read whole: handed to a policy's function, or used whole.
        var wholeEntities: Set<String> = []
        /// Entities a custom policy's code may read (its mapping's and those they lead to): their
        /// properties are not held to the check, but whether their objects are mapped at all is.
        var policyReach: Set<String> = []
    }

    /// What the step reads, this file's mappings and the other passes' (`companions`).
    func sourceReads(source: Schema, destination: Schema) -> SourceReads {
        var reads = SourceReads()
        for entityMapping in mapping.entityMappings + companions.flatMap(\.entityMappings) where entityMapping.type != .remove {
            guard let name = entityMapping.source, let start = source.entity(named: name) else { continue }
            let entities = entityMapping.sourceExpression == nil ? [start] : source.hierarchy(under: start)
            // What code of the user's may reach from these objects: they and those they lead to.
            func reach() -> Set<String> {
                var names = Set(entities.map(\.name))
                for entity in entities {
                    for relationship in source.allRelationships(of: entity) {
                        if let target = source.entity(named: relationship.destination) { names.formUnion(source.hierarchy(under: target).map(\.name)) }
                    }
                }
                return names
            }
            if entityMapping.policy != nil { reads.policyReach.formUnion(reach()) }
            var expressions = (entityMapping.attributes + entityMapping.relationships).map(\.expression.expression)
            expressions += [entityMapping.filter?.expression].compactMap { $0 }
            if let sourceExpression = entityMapping.sourceExpression {
                guard let (_, predicate) = MigrationAnalysis.standardFetch(sourceExpression.expression), case .success(let parsed) = ExpressionParser.parse(predicate) else {
                    reads.wholeEntities.formUnion(entities.map(\.name))
                    continue
                }
                expressions.append(parsed)
            }
            if entityMapping.type == .copy, let destinationName = entityMapping.destination, let target = destination.entity(named: destinationName) {
                // A copy carries the properties both entities have by name, and nothing else.
                let carried = Set(Self.storedProperties(of: target, in: destination))
                for entity in entities {
                    for property in Self.storedProperties(of: entity, in: source) where carried.contains(property) {
                        reads.properties.insert("\(entity.name).\(property)")
                        reads.links.insert("\(entity.name).\(property)")
                    }
                }
            }
            guard let paths = SourceProjection.pathsRead(by: expressions) else {
                // The source object used whole (handed to a function, cast): it, and what it leads to.
                reads.wholeEntities.formUnion(entities.map(\.name))
                reads.policyReach.formUnion(reach())
                continue
            }
            for path in paths {
                // Each key is read for every entity the path may be at there; the last one's
                // value whole, when the expression takes it.
                let valueKey = path.givesValue ? path.keys.lastIndex { $0 != SourceProjection.wholeObjects } : nil
                var at = entities
                for (position, key) in path.keys.enumerated() {
                    if key == SourceProjection.wholeObjects {
                        reads.wholeEntities.formUnion(at.map(\.name))
                        break
                    }
                    var next: [Entity] = []
                    for entity in at {
                        reads.properties.insert("\(entity.name).\(key)")
                        if position == valueKey { reads.links.insert("\(entity.name).\(key)") }
                        if case .relationship(let relationship)? = source.property(named: key, in: entity), let target = source.entity(named: relationship.destination) {
                            next += source.hierarchy(under: target)
                        }
                    }
                    at = next
                    if at.isEmpty { break }
                }
            }
        }
        return reads
    }

    /// Source properties of objects some mapping reads that hold values no expression of the
    /// step reads (this file's and, for a step of several passes, the other passes'), followed
    /// through key paths (`$source.note.title` reads the note's title) and into the predicates of
    /// `$manager` fetches (`$source.folderName` there), and not listed under `drops:`: said once
    /// each, at a mapping that reads their objects (one whose source they are, when there is
    /// one). A `copy` mapping reads the properties its destination has by the same names. Not
    /// said for objects a `remove` mapping drops on purpose, nor for objects a custom policy may
    /// read (its mapping's, and those they lead to) or that are read whole (handed to a policy's
    /// function, `CAST($source, …)`). A pass of a step checked without the others is not held to
    /// it: what it leaves, another may read.
    mutating func checkUnreadSourceProperties(source: Schema, reads: SourceReads) {
        guard judgesTheStep else { return }
        let all = mapping.entityMappings + companions.flatMap(\.entityMappings)
        guard all.allSatisfy(\.isReadWhole) else { return }
        let read = reads.properties, readWhole = reads.wholeEntities.union(reads.policyReach)
        for entity in source.entities where !entity.isAbstract && !readWhole.contains(entity.name) {
            let readBy = Self.readers(of: entity, in: source, among: all)
            guard !readBy.isEmpty, !readBy.contains(where: { $0.type == .remove }) else { continue }
            let dropped = Set(readBy.flatMap(\.drops))
            // A relationship's links are read from either side (a to-many is usually set from its
            // to-one inverse), and are nothing to keep when no mapping keeps the objects they lead to.
            // Read by an expression of the step: a relationship where one takes its value (its
            // objects), not where one only follows it further (`$source.owner.name`) or counts it.
            func taken(_ property: String) -> Bool {
                (Self.isRelationship(property, of: entity, in: source) ? reads.links : read).contains("\(entity.name).\(property)")
            }
            func isRead(_ property: String) -> Bool {
                if taken(property) { return true }
                guard case .relationship(let relationship)? = source.property(named: property, in: entity),
                      let target = source.entity(named: relationship.destination) else { return false }
                let targets = source.hierarchy(under: target)
                if !targets.contains(where: { target in !target.isAbstract && Self.readers(of: target, in: source, among: all).contains { $0.type != .remove } }) { return true }
                guard let inverse = relationship.inverse else { return false }
                return targets.contains { reads.links.contains("\($0.name).\(inverse)") || readWhole.contains($0.name) }
            }
            // A link is one fact: its inverse listed under `drops:` of a mapping of the other side says it too.
            func droppedOnPurpose(_ property: String) -> Bool {
                if dropped.contains(property) { return true }
                guard case .relationship(let relationship)? = source.property(named: property, in: entity), let inverse = relationship.inverse,
                      let target = source.entity(named: relationship.destination) else { return false }
                return source.hierarchy(under: target).contains { Self.readers(of: $0, in: source, among: all).contains { $0.drops.contains(inverse) } }
            }
            let stored = Self.storedProperties(of: entity, in: source)
            let unread = stored.filter { property in
                !isRead(property) && !droppedOnPurpose(property) && !unmappedAttributesReported.contains("\(entity.name).\(property)")
            }
            // A property listed as dropped that an expression reads: the list no longer says what is lost.
            for mapping in readBy where mapping.source == entity.name {
                // Read by an expression itself: links that go with their objects, or that the
                // inverse carries, are not (`infer` lists a removed relationship, rightly).
                // A relationship only followed or counted keeps no link: listing it is right.
                for listed in mapping.drops where stored.contains(listed) && taken(listed) {
                    warning("'drops:' lists '\(listed)', which an expression of this mapping reads: the list no longer says what is dropped",
                            at: mapping.location(of: "drops.\(listed)"), length: listed.count, fix: "remove '\(listed)' from 'drops:'")
                }
            }
            guard !unread.isEmpty else { continue }
            // Said where `drops:` can name them: at a mapping of the entity itself, if there is one.
            let at = readBy.first { $0.source == entity.name } ?? readBy[0]
            let list = unread.map { "'\($0)'" }.joined(separator: ", ")
            // A relationship's values are its links.
            let what = unread.allSatisfy { Self.isRelationship($0, of: entity, in: source) } ? "links" : "values"
            let (them, values) = unread.count == 1 ? ("it", "its \(what)") : ("them", "their \(what)")
            // A relationship an expression follows to other values (`$source.owner.name`) keeps none of its links.
            let followed = unread.filter { read.contains("\(entity.name).\($0)") }
            let only = followed.isEmpty ? "" : " (\(followed.map { "'\($0)'" }.joined(separator: ", ")) only followed to other values or counted, which keeps no link)"
            warning("\(list) of \(entity.name) in \(source.version) \(unread.count == 1 ? "is" : "are") read by no expression of this mapping\(only): \(values) would be dropped",
                    at: at.location, length: at.name.count,
                    fix: "map \(them) where the values belong, or add 'drops: [\(unread.joined(separator: ", "))]' to '\(at.name)' to drop them on purpose")
        }
    }

    /// An ordered to-many of the destination that its objects' mapping leaves to the inverse (the
    /// usual way to write a mapping: set the to-one, the inverse follows) gets its objects in the
    /// order they are migrated: the order of the source's ordered to-many, which no expression
    /// reads, is lost, as Core Data loses it. The links count as read (the inverse carries them),
    /// so the check of unread values does not say it: this does, at the mapping that could map it.
    mutating func checkOrdersReadOnlyThroughInverses(source: Schema, destination: Schema, reads: SourceReads) {
        guard judgesTheStep else { return }
        let all = mapping.entityMappings + companions.flatMap(\.entityMappings)
        guard all.allSatisfy(\.isReadWhole) else { return }
        for entityMapping in mapping.entityMappings where entityMapping.type == .transform && entityMapping.policy == nil && entityMapping.sourceExpression == nil {
            guard let sourceName = entityMapping.source, let sourceEntity = source.entity(named: sourceName), !reads.wholeEntities.contains(sourceName),
                  let destinationName = entityMapping.destination, let destinationEntity = destination.entity(named: destinationName) else { continue }
            let unreadOrders = source.allRelationships(of: sourceEntity).filter { relationship in
                // Counted or followed further, its objects' order is read by nothing.
                relationship.isToMany && relationship.isOrdered && !relationship.isTransient && !reads.links.contains("\(sourceName).\(relationship.name)")
                    && !entityMapping.drops.contains(relationship.name)
            }
            guard !unreadOrders.isEmpty else { continue }
            for relationship in destination.allRelationships(of: destinationEntity) where relationship.isToMany && relationship.isOrdered && !relationship.isTransient {
                guard entityMapping.relationshipMapping(named: relationship.name) == nil, let inverse = relationship.inverse,
                      all.contains(where: { other in
                          guard other.relationshipMapping(named: inverse) != nil, let created = other.destination.flatMap(destination.entity(named:)) else { return false }
                          return destination.ancestry(of: created).contains { $0.name == relationship.destination }
                      }) else { continue }
                // The source's ordered relationship this one continues (by name or renaming
                // identifier); another's order is not this one's to lose.
                guard let from = unreadOrders.first(where: { $0.name == relationship.name || $0.name == relationship.renamingIdentifier }) else { continue }
                warning("the order of '\(from.name)' of \(sourceName) in \(source.version) is read by no expression: '\(relationship.name)' of \(destinationName) is set from its inverse '\(inverse)' alone, its objects in the order they are migrated",
                        at: entityMapping.location, length: entityMapping.name.count,
                        fix: "map '\(relationship.name)' in '\(entityMapping.name)' from \(ExpressionLiteral.sourceKey(from.name)) to keep the order, or add 'drops: [\(from.name)]' to drop it on purpose")
            }
        }
    }

    /// Whether an entity's property of that name is a relationship.
    static func isRelationship(_ name: String, of entity: Entity, in schema: Schema) -> Bool {
        if case .relationship? = schema.property(named: name, in: entity) { return true }
        return false
    }

    /// The names of an entity's stored properties (its own and inherited), in schema order.
    static func storedProperties(of entity: Entity, in schema: Schema) -> [String] {
        schema.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name) + schema.allRelationships(of: entity).filter { !$0.isTransient }.map(\.name)
    }
}
