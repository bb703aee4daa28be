import Foundation
import MapcFoundation
import MapcModel
import MapcStore

/// What a migration step knows of its mapping model before it reads a single object: worked out
/// once from the mapping and the two stores' schemas and layouts, a plain `Sendable` value that
/// every part of the run reads and none changes. Reading it touches no database.
///
/// Each answer here is an optimisation's precondition (which objects anyone looks up, which
/// mappings follow a key rule, which write their relationships with their rows, which source
/// properties to read, which filters are nil tests); the reasons are with each function.
struct MigrationAnalysis: Sendable {
    /// The entity mappings' names by position.
    let mappingNames: [String]
    /// Entity mapping positions by name.
    let indexByName: [String: Int]
    /// Per mapping position, the suffix its objects' identities take after the source object's:
    /// none where no earlier mapping gave any object it may read its bare id, `.MappingName`
    /// otherwise (`identitySuffixes(of:in:readBefore:)`), so ids stay unique and predictable in
    /// formats that keep identities.
    let identitySuffixes: [String]
    /// Per mapping position, the source entities whose objects it may read (`entitiesRead(by:in:)`):
    /// its source entity's, and every entity of the hierarchy its fetch reads.
    let entitiesRead: [Set<String>]
    /// The mappings whose objects anything may look up by source object (`$manager` calls naming
    /// them, policies, copied relationships); nil when that may be any. Objects of a mapping
    /// nobody looks up, created by SQL with its relationships, record no associations.
    let lookedUpMappings: Set<Int>?
    /// Per mapping position, whether it creates exactly one destination object per source object
    /// it reads, all from one source table (`followsKeyRule`).
    let followsKeyRule: [Bool]
    /// Per mapping position, whether its relationships may be written with its rows as far as the
    /// store and the other mappings go (`setsRelationshipsAtCreation`); the compiled path asks.
    let setsRelationshipsAtCreation: [Bool]
    /// Per mapping position, whether the interpreter writes its relationships with its rows: they
    /// may be, and every relationship expression gives the same value in phase 1.
    let relationshipsAtCreation: [Bool]
    /// Per mapping position, the source properties phase 1 reads (nil: all of them), those of the
    /// relationships it writes with the rows included.
    let creationProperties: [Set<String>?]
    /// Per mapping position, the source properties phase 2 reads (nil: all of them).
    let relationshipProperties: [Set<String>?]
    /// Per mapping position, its filter when it is a nil test of a source attribute.
    let nilTests: [NilTest?]

    /// Analyses a mapping model run from `source` into `destination`. Throws when two entity
    /// mappings share a name: lookups, associations and messages name mappings, and would mix
    /// them up (the loader refuses such a model; one made in code may not have been loaded).
    init(mapping: MappingModel, source: Store, destination: Store, readBefore: Set<String> = []) throws {
        let mappings = mapping.entityMappings
        mappingNames = mappings.map(\.name)
        if let repeated = Dictionary(grouping: mappingNames, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            throw MigrationError.setup("two entity mappings are named '\(repeated)'; give each mapping of the model a name of its own")
        }
        indexByName = Dictionary(mappings.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        identitySuffixes = Self.identitySuffixes(of: mappings, in: source.schema, readBefore: readBefore)
        entitiesRead = mappings.map { Self.entitiesRead(by: $0, in: source.schema) }
        lookedUpMappings = Self.lookedUpMappings(in: mapping)
        let followsKeyRule = mappings.map(Self.followsKeyRule)
        self.followsKeyRule = followsKeyRule
        let context = AtCreationContext(mapping: mapping, destination: destination)
        let setsAtCreation = mappings.indices.map { index in
            followsKeyRule[index] && Self.setsRelationshipsAtCreation(index, in: mapping, destination: destination, context: context)
        }
        setsRelationshipsAtCreation = setsAtCreation
        let atCreation = mappings.indices.map { index in
            setsAtCreation[index] && mappings[index].relationships.allSatisfy { Self.evaluatesAtCreation($0.expression.expression, mappingIndex: index, in: mapping) }
        }
        relationshipsAtCreation = atCreation
        creationProperties = mappings.indices.map { index in
            let entityMapping = mappings[index]
            guard atCreation[index] else { return SourceProjection.creation(entityMapping) }
            guard let attributes = SourceProjection.creation(entityMapping), let relationships = SourceProjection.relationships(entityMapping) else { return nil }
            return attributes.union(relationships)
        }
        relationshipProperties = mappings.map(SourceProjection.relationships)
        nilTests = mappings.map { entityMapping in
            entityMapping.filter.flatMap { Self.nilTest($0.expression, in: entityMapping, sourceSchema: source.schema) }
        }
    }

    /// The position of the entity mapping named in a `$manager` call, or an error suggesting the closest name.
    func index(ofMappingNamed name: String) throws -> Int {
        guard let index = indexByName[name] else {
            throw MapcError.notFound("no entity mapping named '\(name)'" + (Suggestions.didYouMean(name, in: mappingNames).map { "; \($0)" } ?? ""))
        }
        return index
    }

    // MARK: Which objects are looked up

    /// The mappings named by `$manager` lookups in the model's expressions; nil when lookups may
    /// reach any mapping: a custom policy (its code may ask anything), a lookup by source
    /// relationship or by destination object, a mapping name that is not a literal, or a `copy`
    /// mapping (it carries relationships over through whichever mapping migrated the targets).
    static func lookedUpMappings(in mapping: MappingModel) -> Set<Int>? {
        var named: Set<Int> = []
        let index = Dictionary(mapping.entityMappings.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        for entityMapping in mapping.entityMappings {
            if entityMapping.policy != nil || entityMapping.type == .copy { return nil }
            let expressions = (entityMapping.attributes + entityMapping.relationships).map(\.expression.expression)
                + [entityMapping.filter?.expression, entityMapping.sourceExpression?.expression].compactMap { $0 }
            var pending = expressions
            while let expression = pending.popLast() {
                pending += expression.children
                guard case .method(let receiver, let selector, _, let arguments) = expression.kind, receiver.kind == .variable("manager") else { continue }
                switch selector {
                case MethodSelector.destinationInstancesForEntityMapping.rawValue:
                    guard case .literal(.string(let name))? = arguments.first?.kind, let position = index[name] else { return nil }
                    named.insert(position)
                case MethodSelector.fetchRequestForSourceEntity.rawValue:
                    // The predicate is evaluated with `$manager` bound too: its lookups count.
                    guard let predicate = fetchPredicate(arguments) else { return nil }
                    pending.append(predicate)
                default:
                    return nil
                }
            }
        }
        return named
    }

    /// Whether a mapping's objects must record their associations: someone may look them up, or
    /// its relationships are set in phase 2 (which finds each object's source that way).
    func recordsAssociations(_ index: Int, relationships: [PropertyMapping], relationshipsDone: Bool) -> Bool {
        if let looked = lookedUpMappings, !looked.contains(index), relationshipsDone || relationships.isEmpty { return false }
        return true
    }

    // MARK: Shapes of mappings and expressions

    /// Whether a mapping creates exactly one destination object of its destination entity per
    /// source object it reads, all from one source table: no custom policy, and its sources are its
    /// source entity or Xcode's standard fetch of a hierarchy.
    static func followsKeyRule(_ entityMapping: EntityMapping) -> Bool {
        guard entityMapping.policy == nil, entityMapping.type == .transform || entityMapping.type == .copy,
              entityMapping.destination != nil, entityMapping.source != nil else { return false }
        return entityMapping.sourceExpression.map { standardFetch($0.expression) != nil } ?? true
    }

    /// The identity rule, mapping by mapping in order: a mapping with a source entity gives its
    /// objects their sources' bare ids when none of the objects it may read is one an earlier
    /// mapping (or an earlier pass, `readBefore`) gave its bare id; any other gives `.MappingName`.
    /// An `add` mapping, or one named after its objects, gives no bare id, so it takes none away.
    static func identitySuffixes(of mappings: [EntityMapping], in schema: Schema, readBefore: Set<String>) -> [String] {
        var named = readBefore
        return mappings.map { entityMapping in
            let reach = entitiesRead(by: entityMapping, in: schema)
            guard entityMapping.source != nil, entityMapping.type != .remove, reach.isDisjoint(with: named) else { return ".\(entityMapping.name)" }
            named.formUnion(reach)
            return ""
        }
    }

    /// The source entities whose objects a mapping may read: its source entity's, and with a
    /// source expression every entity of the hierarchy it fetches (a fetch request includes
    /// sub-entities; another expression, its source's hierarchy): what the identity rule
    /// (`identitySuffixes`) compares.
    static func entitiesRead(by entityMapping: EntityMapping, in schema: Schema) -> Set<String> {
        guard let sourceExpression = entityMapping.sourceExpression else { return Set(entityMapping.source.map { [$0] } ?? []) }
        let fetched = standardFetch(sourceExpression.expression)?.entity ?? entityMapping.source
        guard let name = fetched, let root = schema.entity(named: name) else { return Set(entityMapping.source.map { [$0] } ?? []) }
        return Set(schema.hierarchy(under: root).map(\.name)).union(entityMapping.source.map { [$0] } ?? [])
    }

    /// The entity and predicate of `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E", "P"), …)`.
    static func standardFetch(_ expression: Expr) -> (entity: String, predicate: String)? {
        guard case .fetch(let request, _, _) = expression.kind,
              case .method(let receiver, let selector, _, let arguments) = request.kind, receiver.kind == .variable("manager"),
              selector == MethodSelector.fetchRequestForSourceEntity.rawValue, arguments.count == 2,
              case .literal(.string(let entity)) = arguments[0].kind, case .literal(.string(let predicate)) = arguments[1].kind else { return nil }
        return (entity, predicate)
    }

    /// The predicate of a `fetchRequestForSourceEntityNamed:predicateString:` call's arguments,
    /// parsed: the fetch evaluates it per object with the mapping's variables (`$manager`,
    /// `$source`) bound, so what it looks up counts as the mapping's. Nil when the string is not
    /// a literal or does not parse; the analyses then assume the worst.
    static func fetchPredicate(_ arguments: [Expr]) -> Expr? {
        guard arguments.count == 2, case .literal(.string(let text)) = arguments[1].kind, case .success(let predicate) = ExpressionParser.parse(text) else { return nil }
        return predicate
    }

    /// The key of an expression `$source.key` (one key after the source variable) when it names a
    /// stored attribute of the mapping's source entity (so of its sub-entities too), else nil: only
    /// such a value is in a source object as read, exactly as the evaluator would find it.
    static func sourceAttribute(read expression: Expr, in entityMapping: EntityMapping, sourceSchema: Schema) -> String? {
        guard case .keyPath(let root, let components) = expression.kind, root.kind == .variable("source") || root.kind == .evaluatedObject,
              components.count == 1, case .key(let key, _) = components[0],
              let sourceName = entityMapping.source, let entity = sourceSchema.entity(named: sourceName),
              case .attribute(let attribute)? = sourceSchema.property(named: key, in: entity), !attribute.isTransient else { return nil }
        return key
    }

    /// The test of a filter `$source.attribute == nil` or `!= nil` (`image != nil`), on a stored
    /// attribute of the mapping's source entity: the attribute, and whether the filter keeps nils.
    struct NilTest: Sendable {
        var attribute: String
        var keepsNil: Bool
    }

    /// A mapping's filter as a nil test, when it is one.
    static func nilTest(_ filter: Expr, in entityMapping: EntityMapping, sourceSchema: Schema) -> NilTest? {
        guard case .comparison(let op, nil, let options, let left, let right) = filter.kind, options.isEmpty, op == .equal || op == .notEqual else { return nil }
        let tested: Expr
        switch (left.kind, right.kind) {
        case (_, .literal(.null)): tested = left
        case (.literal(.null), _): tested = right
        default: return nil
        }
        guard let attribute = sourceAttribute(read: tested, in: entityMapping, sourceSchema: sourceSchema) else { return nil }
        return NilTest(attribute: attribute, keepsNil: op == .equal)
    }

    /// The mapping a relationship expression `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "Name", $source)`
    /// (or `SELF`) looks the source object up in, when it is exactly that.
    static func lookupOfTheSource(_ expression: Expr) -> String? {
        guard case .method(let receiver, let selector, _, let arguments) = expression.kind, receiver.kind == .variable("manager"),
              selector == MethodSelector.destinationInstancesForEntityMapping.rawValue, arguments.count == 2,
              case .literal(.string(let name)) = arguments[0].kind else { return nil }
        switch arguments[1].kind {
        case .variable("source"), .evaluatedObject: return name
        default: return nil
        }
    }
}
