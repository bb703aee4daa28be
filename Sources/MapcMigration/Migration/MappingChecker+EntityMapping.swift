import Foundation
import MapcFoundation
import MapcModel

/// The checks of one entity mapping, in the order `mapc check` reports them: its entities and
/// type, its policy, its expressions against the source schema, its attribute and relationship
/// mappings against the destination, what a copy carries over, the required attributes nothing
/// sets, its `todo:` items and its recorded hashes.
extension MappingChecker {
    /// An entity mapping with the two schemas and the entities it names (nil when unknown).
    struct EntityMappingSides {
        var entityMapping: EntityMapping
        var sourceSchema: Schema
        var destinationSchema: Schema
        var sourceEntity: Entity?
        var destinationEntity: Entity?
        /// The destination entity's attributes and relationships, its ancestors' included.
        var destinationAttributes: [Attribute]
        var destinationRelationships: [Relationship]
    }

    mutating func checkEntityMapping(_ entityMapping: EntityMapping, source sourceSchema: Schema, destination destinationSchema: Schema,
                                     mappings: [String: (source: String?, destination: String?)]) {
        let sides = resolveEntities(of: entityMapping, source: sourceSchema, destination: destinationSchema)
        checkType(sides)
        let policyType = checkPolicy(sides)
        // A property mapping that could not be read may set what looks unset: its name counts as set.
        let provided = (policyType?.providedAttributes ?? []).union(entityMapping.unreadPropertyMappings ?? [])
        let scope = expressionScope(sides, mappings: mappings)
        checkExpressions(sides, scope: scope)
        checkAttributeMappings(sides, scope: scope)
        checkRelationshipMappings(sides, scope: scope, mappings: mappings)
        // A policy that is not registered may set anything: nothing can be said of what it leaves unset.
        let policyUnknown = entityMapping.policy != nil && policyType == nil
        // One whose name could not be read may be the one that sets anything that looks unset.
        if !policyUnknown && entityMapping.unreadPropertyMappings != nil {
            checkCopiedAttributes(sides, provided: provided)
            checkUnsetAttributes(sides, provided: provided)
        }
        // Work the author (or `mapc infer`) marked as not done yet.
        for item in entityMapping.todo {
            error("still to do in mapping '\(entityMapping.name)': \(item.text)", at: item.location ?? entityMapping.location,
                  fix: "do it, then delete the item from 'todo:'")
        }
        if let recorded = entityMapping.sourceHash, let sourceEntity = sides.sourceEntity {
            checkHash(recorded, entity: sourceEntity, schema: sourceSchema, side: "source")
        }
        if let recorded = entityMapping.destinationHash, let destinationEntity = sides.destinationEntity {
            checkHash(recorded, entity: destinationEntity, schema: destinationSchema, side: "destination")
        }
    }

    /// The entities an entity mapping names, each an error when unknown (or, for a destination,
    /// abstract).
    private mutating func resolveEntities(of entityMapping: EntityMapping, source sourceSchema: Schema, destination destinationSchema: Schema) -> EntityMappingSides {
        var sourceEntity: Entity?
        var destinationEntity: Entity?
        if let name = entityMapping.source {
            sourceEntity = sourceSchema.entity(named: name)
            // An abstract entity has no objects of its own: without a fetch (which reads the
            // sub-entities' too) the mapping reads nothing, and a lookup naming it finds nothing.
            if let abstract = sourceEntity, abstract.isAbstract, entityMapping.sourceExpression == nil, entityMapping.type != .remove {
                let subEntities = sourceSchema.hierarchy(under: abstract).filter { !$0.isAbstract }.map(\.name)
                warning("source entity '\(name)' is abstract: it has no objects of its own, so '\(entityMapping.name)' reads none and creates nothing (a lookup naming it finds nothing)",
                        at: entityMapping.location(of: "source"), length: name.count,
                        fix: "give it a sourceExpression fetching \(name), which reads its sub-entities' objects (\(subEntities.joined(separator: ", "))): "
                            + "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"\(name)\", \"TRUEPREDICATE\"), $manager.sourceContext, NO); or map each sub-entity in a mapping of its own")
            }
            if sourceEntity == nil {
                error("unknown source entity '\(name)' in \(sourceSchema.version)", at: entityMapping.location(of: "source"), length: name.count,
                      fix: Suggestions.didYouMean(name, in: sourceSchema.entities.map(\.name))
                        ?? "name one of its entities (\(sourceSchema.entities.map(\.name).joined(separator: ", "))), or delete mapping '\(entityMapping.name)' if \(name) was never in \(sourceSchema.version)")
            }
        }
        if let name = entityMapping.destination {
            destinationEntity = destinationSchema.entity(named: name)
            if let destinationEntity {
                if destinationEntity.isAbstract {
                    error("destination entity '\(name)' is abstract; objects cannot be created for it", at: entityMapping.location(of: "destination"), length: name.count, fix: "map to one of its concrete sub-entities")
                }
            } else {
                error("unknown destination entity '\(name)' in \(destinationSchema.version)", at: entityMapping.location(of: "destination"), length: name.count,
                      fix: Suggestions.didYouMean(name, in: destinationSchema.entities.map(\.name))
                        ?? "name one of its entities (\(destinationSchema.entities.map(\.name).joined(separator: ", "))), or, to drop the objects of '\(entityMapping.name)', make it 'type: remove' without a destination")
            }
        }
        return EntityMappingSides(entityMapping: entityMapping, sourceSchema: sourceSchema, destinationSchema: destinationSchema,
                                  sourceEntity: sourceEntity, destinationEntity: destinationEntity,
                                  destinationAttributes: destinationEntity.map { destinationSchema.allAttributes(of: $0) } ?? [],
                                  destinationRelationships: destinationEntity.map { destinationSchema.allRelationships(of: $0) } ?? [])
    }

    /// The mapping's type against the entities it names.
    private mutating func checkType(_ sides: EntityMappingSides) {
        let entityMapping = sides.entityMapping
        switch entityMapping.type {
        case .remove where entityMapping.destination != nil:
            error("a remove mapping has no destination", at: sides.entityMapping.location(of: "type"), fix: "remove 'destination:' or change the type")
        case .add where entityMapping.source != nil:
            error("an add mapping has no source", at: sides.entityMapping.location(of: "type"), fix: "remove 'source:' or change the type to transform")
        case .add where entityMapping.destination == nil:
            // It would make objects of no entity: a run made "0 objects" of it, without a word.
            error("an add mapping needs a destination entity: the entity whose objects it makes", at: entityMapping.location, length: entityMapping.name.count,
                  fix: "add 'destination:' with the entity, or remove the mapping")
        case .add where entityMapping.policy == nil && entityMapping.sourceExpression == nil && !(entityMapping.attributes.isEmpty && entityMapping.relationships.isEmpty):
            // No source object, so no `createDestinationInstances`: nothing evaluates the expressions.
            warning("an add mapping without a source expression or a policy makes no objects, so its property expressions never run", at: sides.entityMapping.location(of: "type"),
                    fix: "give it a sourceExpression that fetches the objects to make one from each, or a policy that inserts the objects and sets their values")
        case .copy where entityMapping.source != entityMapping.destination:
            error("a copy mapping needs the same entity on both sides", at: sides.entityMapping.location(of: "type"), fix: "use type transform with property mappings")
        case .transform where entityMapping.source == nil || entityMapping.destination == nil:
            error("a transform mapping needs both a source and a destination entity", at: entityMapping.location)
        default: break
        }
    }

    /// The policy the mapping names, when it is registered, and the entities it says it creates
    /// against the destination.
    private mutating func checkPolicy(_ sides: EntityMappingSides) -> EntityMigrationPolicy.Type? {
        guard let name = sides.entityMapping.policy else { return nil }
        guard let policyType = policies.policy(named: name) else {
            if name.trimmingCharacters(in: .whitespaces).isEmpty {
                error("'policy:' names no class", at: sides.entityMapping.location(of: "policy"), length: 1,
                      fix: "write the name of the policy's class (a subclass of EntityMigrationPolicy), or remove 'policy:' for the default policy")
            } else {
                error("unknown policy '\(name)'", at: sides.entityMapping.location(of: "policy"), length: name.count, fix: policies.hint(forUnknownPolicy: name))
            }
            return nil
        }
        let destinationSchema = sides.destinationSchema
        for created in policyType.createdEntities.sorted() {
            if let entity = destinationSchema.entity(named: created) {
                if entity.isAbstract {
                    error("policy '\(name)' declares it creates \(created) objects, but \(created) is abstract in \(destinationSchema.version)", at: sides.entityMapping.location(of: "policy"), length: name.count,
                          fix: "name a concrete sub-entity in its createdEntities")
                }
            } else if !entitiesOfOtherVersions.contains(created) {
                // A policy serving several steps declares what it creates in each: a name of
                // another version is not this step's (said only where no version is known).
                warning("policy '\(name)' declares it creates \(created) objects, but \(destinationSchema.version) has no entity \(created)", at: sides.entityMapping.location(of: "policy"), length: name.count,
                        fix: Suggestions.didYouMean(created, in: destinationSchema.entities.map(\.name)) ?? "correct its createdEntities, unless the policy serves another step whose destination has \(created)")
            }
        }
        // What it says it provides is an attribute of an object it makes (the destination entity,
        // one it declares it creates, or their sub-entities): a misspelt name provides nothing.
        let made = ([sides.entityMapping.destination].compactMap { $0 } + policyType.createdEntities).compactMap { destinationSchema.entity(named: $0) }
        let attributes = Set(made.flatMap { destinationSchema.hierarchy(under: $0) }.flatMap { destinationSchema.allAttributes(of: $0).map(\.name) })
        if !made.isEmpty {
            for provided in policyType.providedAttributes.sorted() where !attributes.contains(provided) {
                error("policy '\(name)' declares it provides '\(provided)', which no entity it makes has in \(destinationSchema.version)", at: sides.entityMapping.location(of: "policy"), length: name.count,
                      fix: Suggestions.didYouMean(provided, in: attributes.sorted()) ?? "correct its providedAttributes")
            }
        }
        return policyType
    }

    /// What the mapping's expressions may name: the source entity's properties, the variables a
    /// migration binds, the other mappings, the policy's functions.
    private func expressionScope(_ sides: EntityMappingSides, mappings: [String: (source: String?, destination: String?)]) -> CheckScope {
        let entityMapping = sides.entityMapping
        var scope = CheckScope(schema: sides.sourceSchema, source: sides.sourceEntity?.name, variables: [
            "destination": sides.destinationEntity.map { .object($0.name) } ?? .unknown, "entityMapping": .entityMapping, "propertyMapping": .propertyMapping,
        ])
        if sides.sourceEntity == nil { scope.evaluatedObject = .unknown; scope.variables["source"] = .unknown }
        scope.entityMappings = mappings
        scope.policyFunctions = entityMapping.policy.flatMap { policies.makePolicy(named: $0) }.map { Set($0.functions.keys) } ?? (entityMapping.policy == nil ? [] : nil)
        scope.hasPolicy = entityMapping.policy != nil
        return scope
    }

    /// The filter and the source expression; no expression may read the destination's key paths.
    private mutating func checkExpressions(_ sides: EntityMappingSides, scope propertyScope: CheckScope) {
        let entityMapping = sides.entityMapping
        // A property mapping binds `$propertyMapping`; the filter and the source expression have none.
        var scope = propertyScope
        scope.variables["propertyMapping"] = nil
        let expressions = [entityMapping.filter, entityMapping.sourceExpression].compactMap { $0 } + (entityMapping.attributes + entityMapping.relationships).map(\.expression)
        for expression in expressions { diagnostics += Self.destinationKeyPaths(in: expression) }
        if let filter = entityMapping.filter {
            var checker = ExpressionChecker(scope: scope, source: filter.source)
            checker.checkPredicate(filter.expression)
            diagnostics += checker.diagnostics
            // `notes != "delete me"` reads as "all but those", and leaves out the objects without
            // notes too: a filter runs as Core Data's fetch, where a test of nil is unknown.
            for (test, keyPath) in checker.testsLeavingOutNil(in: filter.expression) {
                let text = filter.source.text(of: keyPath.range)
                warning("this filter also leaves out the objects whose \(text) is nil: a filter runs as Core Data's fetch, in SQL's logic, where a test of nil is neither true nor false",
                        at: filter.source.location(of: test.range.start), length: test.range.length,
                        fix: "to keep them, test '\(text) == nil OR (…)' with this test; to leave them out on purpose, test '\(text) != nil AND (…)'")
            }
        }
        if let sourceExpression = entityMapping.sourceExpression {
            var checker = ExpressionChecker(scope: scope, source: sourceExpression.source)
            let type = checker.check(sourceExpression.expression)
            diagnostics += checker.diagnostics
            if case .collection(.object(let entity)) = type, let expected = entityMapping.source, entity != expected {
                error("the source expression fetches \(entity) objects, but the mapping's source is \(expected)", at: sourceExpression.source.origin, length: sourceExpression.source.text.count)
            }
        }
    }

    /// Each attribute mapping names a destination attribute and gives a value it can hold.
    private mutating func checkAttributeMappings(_ sides: EntityMappingSides, scope: CheckScope) {
        guard let destinationEntity = sides.destinationEntity else { return }
        let entityMapping = sides.entityMapping, destinationAttributes = sides.destinationAttributes
        for propertyMapping in entityMapping.attributes {
            guard let attribute = destinationAttributes.first(where: { $0.name == propertyMapping.name }) else {
                if sides.destinationRelationships.contains(where: { $0.name == propertyMapping.name }) {
                    error("'\(propertyMapping.name)' is a relationship of \(destinationEntity.name); move it under 'relationships:'", at: propertyMapping.location, length: propertyMapping.name.count)
                } else {
                    error("unknown attribute '\(propertyMapping.name)' of destination entity \(destinationEntity.name)", at: propertyMapping.location, length: propertyMapping.name.count,
                          fix: Suggestions.didYouMean(propertyMapping.name, in: destinationAttributes.map(\.name)) ?? "attributes: \(destinationAttributes.map(\.name).joined(separator: ", "))")
                }
                var checker = ExpressionChecker(scope: scope, source: propertyMapping.expression.source)
                checker.check(propertyMapping.expression.expression)
                diagnostics += checker.diagnostics
                continue
            }
            if attribute.isTransient {
                warning("attribute '\(attribute.name)' is transient; the value is not stored", at: propertyMapping.location, length: attribute.name.count)
            }
            var checker = ExpressionChecker(scope: scope, source: propertyMapping.expression.source)
            checker.nonNilKeys = entityMapping.filter.map { ExpressionChecker.nonNil(where: $0.expression, holds: true) } ?? []
            checker.checkAssignable(propertyMapping.expression.expression, to: attribute, entity: destinationEntity.name)
            diagnostics += propertyMapping.expression.source.withQuotingHint(checker.diagnostics)
            // A source attribute carried into another number type: what the conversion can cost,
            // as `plan` says of an inferred step's (there a run counts what it does cost).
            if let key = MigrationAnalysis.sourceAttribute(read: propertyMapping.expression.expression, in: entityMapping, sourceSchema: sides.sourceSchema),
               let sourceEntity = sides.sourceEntity, case .attribute(let carried)? = sides.sourceSchema.property(named: key, in: sourceEntity),
               let caution = Self.silentRounding(from: carried.type, to: attribute.type) {
                warning("\(sourceEntity.name).\(key) is \(carried.type.rawValue) and '\(attribute.name)' is \(attribute.type.rawValue): \(caution)",
                        at: propertyMapping.location, length: propertyMapping.name.count,
                        fix: "keep the type, or map a value that fits without loss")
            }
        }
    }

    /// What carrying a number into a type that rounds some values costs, when the value rules
    /// say nothing of it themselves (an int64 and an int32 are both integers to them): nil when
    /// nothing is rounded, or when they warn already.
    static func silentRounding(from: AttributeType, to: AttributeType) -> String? {
        guard ValueRules.roundsSilently(from: from, to: to) else { return nil }
        if case .checked(_?) = ValueRules.assignment(of: ValueKind(from), to: to) { return nil }
        return ValueRules.numericConversionCaution(from: from, to: to)
    }

    /// Each relationship mapping names a destination relationship and gives objects it can hold.
    private mutating func checkRelationshipMappings(_ sides: EntityMappingSides, scope: CheckScope, mappings: [String: (source: String?, destination: String?)]) {
        guard let destinationEntity = sides.destinationEntity else { return }
        let destinationRelationships = sides.destinationRelationships
        for propertyMapping in sides.entityMapping.relationships {
            guard let relationship = destinationRelationships.first(where: { $0.name == propertyMapping.name }) else {
                if sides.destinationAttributes.contains(where: { $0.name == propertyMapping.name }) {
                    error("'\(propertyMapping.name)' is an attribute of \(destinationEntity.name); move it under 'attributes:'", at: propertyMapping.location, length: propertyMapping.name.count)
                } else {
                    error("unknown relationship '\(propertyMapping.name)' of destination entity \(destinationEntity.name)", at: propertyMapping.location, length: propertyMapping.name.count,
                          fix: Suggestions.didYouMean(propertyMapping.name, in: destinationRelationships.map(\.name)) ?? (destinationRelationships.isEmpty ? "\(destinationEntity.name) has no relationships" : "relationships: \(destinationRelationships.map(\.name).joined(separator: ", "))"))
                }
                var checker = ExpressionChecker(scope: scope, source: propertyMapping.expression.source)
                checker.check(propertyMapping.expression.expression)
                diagnostics += checker.diagnostics
                continue
            }
            var checker = ExpressionChecker(scope: scope, source: propertyMapping.expression.source)
            let type = checker.check(propertyMapping.expression.expression)
            diagnostics += checker.diagnostics
            checkRelationshipResult(type, propertyMapping, relationship, sides.destinationSchema, mappings)
        }
    }

    /// A copy mapping carries each same-named attribute over: it must fit, and a required
    /// attribute the source does not have must get a value some other way.
    private mutating func checkCopiedAttributes(_ sides: EntityMappingSides, provided: Set<String>) {
        let entityMapping = sides.entityMapping, sourceSchema = sides.sourceSchema, destinationSchema = sides.destinationSchema
        guard entityMapping.type == .copy, let destinationEntity = sides.destinationEntity, let sourceEntity = sides.sourceEntity else { return }
        for attribute in sides.destinationAttributes where !attribute.isTransient && entityMapping.attributeMapping(named: attribute.name) == nil && !provided.contains(attribute.name) {
            if case .attribute(let carried)? = sourceSchema.property(named: attribute.name, in: sourceEntity), !carried.isTransient {
                if carried.isOptional && !attribute.isOptional && attribute.defaultValue == nil {
                    warning("the copy mapping carries '\(attribute.name)' over from an optional attribute into a required one without a default: an object without a value fails validation",
                            at: entityMapping.location, length: entityMapping.name.count,
                            fix: "map it under 'attributes:' with a value for nil, such as '\(attribute.name): TERNARY(\(ExpressionLiteral.sourceKey(attribute.name)) != nil, \(ExpressionLiteral.sourceKey(attribute.name)), …)', or give it a default")
                }
                switch ValueRules.assignment(of: ValueKind(carried.type), to: attribute.type) {
                case .refused(let reason):
                    error("the copy mapping carries '\(attribute.name)' over unchanged, but it was \(carried.type.rawValue) and is now \(attribute.type.rawValue): \(reason)",
                          at: entityMapping.location, length: entityMapping.name.count, fix: "map it under 'attributes:' with a conversion, such as \(Self.conversion(of: attribute.name, from: carried.type, to: attribute.type))")
                case .checked(let caution?):
                    warning("the copy mapping carries '\(attribute.name)' over from \(carried.type.rawValue) into \(attribute.type.rawValue): \(caution)",
                            at: entityMapping.location, length: entityMapping.name.count,
                            fix: attribute.type == .bool ? "map it under 'attributes:' and say which values are true, such as '\(attribute.name): \(ExpressionLiteral.sourceKey(attribute.name)) != 0'"
                                : "map it under 'attributes:' and say how to round, such as '\(attribute.name): floor:(\(ExpressionLiteral.sourceKey(attribute.name)))'")
                case .lossless, .checked(warning: nil):
                    if let caution = Self.silentRounding(from: carried.type, to: attribute.type) {
                        warning("the copy mapping carries '\(attribute.name)' over from \(carried.type.rawValue) into \(attribute.type.rawValue): \(caution)",
                                at: entityMapping.location, length: entityMapping.name.count, fix: "keep the type, or map a value that fits without loss under 'attributes:'")
                    }
                }
            } else if !attribute.isOptional && attribute.defaultValue == nil {
                let why = sourceSchema.property(named: attribute.name, in: sourceEntity) == nil ? "has no attribute '\(attribute.name)'" : "does not store '\(attribute.name)' (it is transient)"
                error("required attribute '\(attribute.name)' of \(destinationEntity.name) gets no value from the copy mapping: \(sourceEntity.name) in \(sourceSchema.version) \(why), and \(destinationSchema.version) gives no default",
                      at: entityMapping.location, length: entityMapping.name.count, fix: "add an expression for it under 'attributes:', or a default in the schema")
            }
        }
    }

    /// Required destination attributes with no value at all, and attributes both entities have
    /// left unmapped (their values are lost). An add mapping creates nothing by itself (it has no
    /// source objects): it cannot be held to this.
    private mutating func checkUnsetAttributes(_ sides: EntityMappingSides, provided: Set<String>) {
        let entityMapping = sides.entityMapping, sourceSchema = sides.sourceSchema
        guard let destinationEntity = sides.destinationEntity, entityMapping.type != .copy, entityMapping.type != .remove, entityMapping.type != .add else { return }
        let sourceEntity = sides.sourceEntity
        for attribute in sides.destinationAttributes where !attribute.isOptional && !attribute.isTransient && attribute.defaultValue == nil {
            if entityMapping.attributeMapping(named: attribute.name) == nil && !provided.contains(attribute.name) {
                let hint: String
                switch sourceEntity.flatMap({ sourceSchema.property(named: attribute.name, in: $0) }) {
                case .attribute(let old)? where ValueRules.assignment(of: ValueKind(old.type), to: attribute.type).isRefused:
                    hint = "add a conversion, such as \(Self.conversion(of: attribute.name, from: old.type, to: attribute.type))"
                case .some: hint = "add '\(attribute.name): \(ExpressionLiteral.sourceKey(attribute.name))'"
                case nil: hint = "add an expression under 'attributes:', or a default in the schema"
                }
                // A policy may set it itself: the way to say so is as likely a fix.
                let byPolicy = entityMapping.policy.map { "; or, where \($0) sets it, list it in its `providedAttributes`" } ?? ""
                error("required attribute '\(attribute.name)' of \(destinationEntity.name) has neither an expression nor a default", at: entityMapping.location, length: entityMapping.name.count, fix: hint + byPolicy)
            }
        }
        guard let sourceEntity, entityMapping.type == .transform else { return }
        // What the mapping's expressions read: `drops:` is offered only for a value none reads
        // (listing one that is read draws its own warning).
        let read = SourceProjection.propertiesRead(by: (entityMapping.attributes + entityMapping.relationships).map(\.expression.expression)) ?? Set(sides.destinationAttributes.map(\.name))
        for attribute in sides.destinationAttributes where entityMapping.attributeMapping(named: attribute.name) == nil && !provided.contains(attribute.name) && !attribute.isTransient {
            // Listed under `drops:`, the loss is on purpose.
            if case .attribute? = sourceSchema.property(named: attribute.name, in: sourceEntity), attribute.isOptional || attribute.defaultValue != nil,
               !entityMapping.drops.contains(attribute.name) {
                unmappedAttributesReported.insert("\(sourceEntity.name).\(attribute.name)")
                let both = sourceEntity.name == destinationEntity.name ? "in \(sourceEntity.name) in both versions" : "in both \(sourceEntity.name) and \(destinationEntity.name)"
                warning("attribute '\(attribute.name)' exists \(both) but is not mapped; its values will be lost",
                        at: entityMapping.location, length: entityMapping.name.count,
                        fix: "add '\(attribute.name): \(ExpressionLiteral.sourceKey(attribute.name))'" + (read.contains(attribute.name) ? "" : ", or 'drops: [\(attribute.name)]' to drop its values on purpose"))
            }
        }
    }
}
