import MapcModel

/// Where an inferred step takes each value of its destination from. `InferredChain` composes the
/// origins of consecutive steps to know whether one inference over all their versions carries
/// every value exactly as the steps one after another would.
package struct InferredOrigins: Sendable, Equatable {
    /// Each destination entity whose objects come from the source, and the source entity they come
    /// from (an entity new in the destination has no objects, and no entry).
    package var entities: [String: String] = [:]
    /// For each of those entities, each property's origin.
    package var properties: [String: [String: PropertyOrigin]] = [:]
    /// Whether the step changes the shape the links and keys follow: an entity's parent (its
    /// table, and in Core Data's format its keys), a relationship's destination within a
    /// hierarchy, an inverse added or removed. Such a step is never taken together with others:
    /// which objects a link may reach, and which keys objects get, are not traced.
    package var reshapes = false

    package init() {}
}

/// Where one property of an inferred step's destination takes its values from.
package enum PropertyOrigin: Sendable, Equatable {
    /// A new property: every object gets its default (`nil` for none; a new relationship starts empty).
    case new(default: Value?)
    /// The source property `from`'s values: of another type when the step changes it (`typeChange`,
    /// a widening or a conversion), nil becoming `nilBecomes` when the property is made required,
    /// and their order dropped when an ordered to-many becomes unordered.
    case carried(from: String, typeChange: TypeChange?, nilBecomes: Value?, dropsOrder: Bool)
}

/// An attribute's change of type in a step.
package struct TypeChange: Sendable, Equatable {
    package var from: AttributeType
    package var to: AttributeType
}

extension InferredOrigins {
    /// Where a mapping file's step takes the values it plainly carries: each destination entity
    /// made by one `transform` or `copy` mapping of a source entity, without a policy or a fetch
    /// of its own; an attribute a `$source.key` (or bare key) copies, or a `copy` mapping carries
    /// by name, from that key; one with no expression, its default; one set to nil, nil. Anything
    /// else an expression computes has no origin, and counts as holding values. Nil when the step
    /// makes objects in another way (an `add` or `custom` mapping, a policy, two mappings into one
    /// entity, several passes): its objects cannot be traced at all.
    /// The data-loss question follows a store's values through such a step as through an inferred one.
    init?(carriedBy step: MigrationStep) {
        guard step.allPasses.count == 1 else { return nil }
        self.init()
        for entityMapping in step.mapping.entityMappings {
            // A policy's hooks run whatever the mapping's type (a `remove` mapping's too) and may
            // insert or set anything.
            guard entityMapping.policy == nil else { return nil }
            switch entityMapping.type {
            case .remove: continue
            case .transform, .copy: break
            case .add, .custom: return nil
            }
            guard entityMapping.sourceExpression == nil, let sourceName = entityMapping.source, let destinationName = entityMapping.destination,
                  entities[destinationName] == nil, let sourceEntity = step.source.entity(named: sourceName),
                  let destinationEntity = step.destination.entity(named: destinationName) else { return nil }
            entities[destinationName] = sourceName
            let sourceAttributes = Dictionary(step.source.allAttributes(of: sourceEntity).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var origins: [String: PropertyOrigin] = [:]
            for attribute in step.destination.allAttributes(of: destinationEntity) where !attribute.isTransient {
                let key: String
                if let mapping = entityMapping.attributeMapping(named: attribute.name) {
                    if case .literal(.null) = mapping.expression.expression.kind {
                        origins[attribute.name] = .new(default: nil)
                        continue
                    }
                    // The one rule of what a plain read of a source attribute is (a stored one).
                    guard let read = MigrationAnalysis.sourceAttribute(read: mapping.expression.expression, in: entityMapping, sourceSchema: step.source) else { continue }
                    key = read
                } else if entityMapping.type == .copy {
                    key = attribute.name
                } else {
                    origins[attribute.name] = .new(default: attribute.defaultValue)
                    continue
                }
                // A copy mapping's attribute the source has not stored gets its default.
                guard let old = sourceAttributes[key], !old.isTransient else {
                    origins[attribute.name] = .new(default: attribute.defaultValue)
                    continue
                }
                let change = old.type == attribute.type ? nil : TypeChange(from: old.type, to: attribute.type)
                origins[attribute.name] = .carried(from: key, typeChange: change, nilBecomes: nil, dropsOrder: false)
            }
            properties[destinationName] = origins
        }
    }
}
