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
