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

    package init() {}
}

/// Where one property of an inferred step's destination takes its values from.
package enum PropertyOrigin: Sendable, Equatable {
    /// A new property: every object gets its default (`nil` for none; a new relationship starts empty).
    case new(default: Value?)
    /// The source property `from`'s values: converted to `convertedTo` when the step converts
    /// between number types (not when it widens, which changes no value), nil becoming
    /// `nilBecomes` when the property is made required, and their order dropped when an ordered
    /// to-many becomes unordered.
    case carried(from: String, convertedTo: AttributeType?, nilBecomes: Value?, dropsOrder: Bool)
}
