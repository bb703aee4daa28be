import MapcFoundation
import MapcModel

/// What a mapping drops: source properties holding values that no expression reads are lost, as
/// an inferred step's removals are (which `run` refuses unless the loss is accepted). A mapping
/// file says so on purpose by listing them under `drops:`; any other is a warning.
extension MappingChecker {
    /// Each name under `drops:` must be a stored property of the mapping's source entity.
    mutating func checkDrops(source: Schema) {
        for entityMapping in mapping.entityMappings where !entityMapping.hasLoadErrors && !entityMapping.drops.isEmpty {
            guard let name = entityMapping.source, let entity = source.entity(named: name) else { continue }
            let stored = Self.storedProperties(of: entity, in: source)
            for dropped in entityMapping.drops where !stored.contains(dropped) {
                let what = source.property(named: dropped, in: entity) == nil ? "which \(name) in \(source.version) does not have" : "which \(name) in \(source.version) does not store (it is transient)"
                error("'drops:' names '\(dropped)', \(what)", at: entityMapping.location(of: "drops.\(dropped)"), length: dropped.count,
                      fix: Suggestions.didYouMean(dropped, in: stored.sorted()) ?? "list properties of \(name) whose values the mapping drops on purpose")
            }
        }
    }

    /// Source properties of objects some mapping reads that hold values no expression of the
    /// mapping model reads, followed through key paths (`$source.note.title` reads the note's
    /// title) and not listed under `drops:`: said once each, at a mapping that reads their objects.
    /// Only provable without custom policies (their code may read anything), and not for objects
    /// a `copy` mapping carries whole, a `remove` mapping drops on purpose, or an expression uses
    /// as a whole (`CAST($source, …)`).
    mutating func checkUnreadSourceProperties(source: Schema) {
        guard !mapping.entityMappings.contains(where: { $0.policy != nil || $0.hasLoadErrors }) else { return }
        var read: Set<String> = [], readWhole: Set<String> = []
        func readers(of entity: Entity) -> [EntityMapping] {
            mapping.entityMappings.filter { $0.source == entity.name || ($0.sourceExpression != nil && $0.source.map { name in source.ancestry(of: entity).contains { $0.name == name } } == true) }
        }
        for entityMapping in mapping.entityMappings where entityMapping.type != .remove {
            guard let name = entityMapping.source, let start = source.entity(named: name) else { continue }
            var expressions = (entityMapping.attributes + entityMapping.relationships).map(\.expression.expression)
            expressions += [entityMapping.filter?.expression].compactMap { $0 }
            var paths: [[String]]?
            if let sourceExpression = entityMapping.sourceExpression {
                if let (_, predicate) = MigrationAnalysis.standardFetch(sourceExpression.expression), case .success(let parsed) = ExpressionParser.parse(predicate) {
                    expressions.append(parsed)
                    paths = entityMapping.type == .copy ? nil : SourceProjection.keyPathsRead(by: expressions)
                }
            } else if entityMapping.type != .copy {
                paths = SourceProjection.keyPathsRead(by: expressions)
            }
            guard let paths else {
                readWhole.formUnion(source.hierarchy(under: start).map(\.name))
                continue
            }
            for path in paths {
                // Each key is read for every entity the path may be at there.
                var entities = entityMapping.sourceExpression == nil ? [start] : source.hierarchy(under: start)
                for key in path {
                    var next: [Entity] = []
                    for entity in entities {
                        read.insert("\(entity.name).\(key)")
                        if case .relationship(let relationship)? = source.property(named: key, in: entity), let target = source.entity(named: relationship.destination) {
                            next += source.hierarchy(under: target)
                        }
                    }
                    entities = next
                    if entities.isEmpty { break }
                }
            }
        }
        for entity in source.entities where !entity.isAbstract && !readWhole.contains(entity.name) {
            let readBy = readers(of: entity)
            guard let first = readBy.first, !readBy.contains(where: { $0.type == .remove }) else { continue }
            let dropped = Set(readBy.flatMap(\.drops))
            // A relationship's links are read from either side (a to-many is usually set from its
            // to-one inverse), and are nothing to keep when no mapping keeps the objects they lead to.
            func isRead(_ property: String) -> Bool {
                if read.contains("\(entity.name).\(property)") { return true }
                guard case .relationship(let relationship)? = source.property(named: property, in: entity),
                      let target = source.entity(named: relationship.destination) else { return false }
                let targets = source.hierarchy(under: target)
                if !targets.contains(where: { target in !target.isAbstract && readers(of: target).contains { $0.type != .remove } }) { return true }
                guard let inverse = relationship.inverse else { return false }
                return targets.contains { read.contains("\($0.name).\(inverse)") || readWhole.contains($0.name) }
            }
            let unread = Self.storedProperties(of: entity, in: source).filter { property in
                !isRead(property) && !dropped.contains(property) && !unmappedAttributesReported.contains("\(entity.name).\(property)")
            }
            guard !unread.isEmpty else { continue }
            let list = unread.map { "'\($0)'" }.joined(separator: ", ")
            let (them, values) = unread.count == 1 ? ("it", "its values") : ("them", "their values")
            warning("\(list) of \(entity.name) in \(source.version) \(unread.count == 1 ? "is" : "are") read by no expression of this mapping: \(values) would be dropped",
                    at: first.location, length: first.name.count,
                    fix: "map \(them) where the values belong, or add 'drops: [\(unread.joined(separator: ", "))]' to '\(first.name)' to drop them on purpose")
        }
    }

    /// The names of an entity's stored properties (its own and inherited), in schema order.
    static func storedProperties(of entity: Entity, in schema: Schema) -> [String] {
        schema.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name) + schema.allRelationships(of: entity).filter { !$0.isTransient }.map(\.name)
    }
}
