import Foundation

/// Filters of the commonest shape answered without walking them, per object: a nil test of a
/// source attribute (`MigrationAnalysis.nilTests`) takes the value the source object was read
/// with, as the evaluator would. Anything else, and any failure, goes to the evaluator, which
/// reports errors located in the mapping file. (The other shortcut, a relationship expression that
/// is exactly a lookup of the source object, is `MigrationAnalysis.lookupOfTheSource`, used by
/// `relatedObjects`.)
extension MigrationRun {
    /// Whether a source object passes its mapping's filter (true without one).
    func passesFilter(_ index: Int, _ source: SourceObject, mapping entityMapping: EntityMapping) throws -> Bool {
        guard let filter = entityMapping.filter else { return true }
        if let test = analysis.nilTests[index], let value = source.data.attributes[test.attribute] {
            return (value == .null) == test.keepsNil
        }
        return try evaluators.evaluate(filter, at: index, for: source, property: "filter") { try $0.evaluateStorePredicate($1) }
    }
}
