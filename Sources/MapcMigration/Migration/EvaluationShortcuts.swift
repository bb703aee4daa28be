import Foundation

/// Expressions of the commonest shapes answered without walking them, per object: the answer is
/// the one the evaluator gives, taken from the same place (the value the source object was read
/// with, the lookup the evaluator would call). Anything else, and any failure, goes to the
/// evaluator, which reports errors located in the mapping file.
extension MigrationRun {
    /// Whether a source object passes its mapping's filter (true without one).
    func passesFilter(_ index: Int, _ source: SourceObject, mapping entityMapping: EntityMapping) throws -> Bool {
        guard let filter = entityMapping.filter else { return true }
        if let test = analysis.nilTests[index], let value = source.data.attributes[test.attribute] {
            return (value == .null) == test.keepsNil
        }
        return try evaluators.evaluate(filter, at: index, for: source, property: "filter") { try $0.evaluatePredicate($1) }
    }
}
