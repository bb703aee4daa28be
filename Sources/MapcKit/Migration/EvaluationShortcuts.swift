import Foundation

/// Expressions of the commonest shapes answered without walking them, per object: the answer is
/// the one the evaluator gives, taken from the same place (the value the source object was read
/// with, the lookup the evaluator would call). Anything else, and any failure, goes to the
/// evaluator, which reports errors located in the mapping file.
extension MigrationManager {
    /// The test of a filter `$source.attribute == nil` or `!= nil` (`image != nil`), on a stored
    /// attribute of the mapping's source entity: the attribute, and whether the filter keeps nils.
    struct NilTest {
        var attribute: String
        var keepsNil: Bool
    }

    /// A mapping's filter as a nil test, when it is one.
    func nilTest(_ filter: Expr, in entityMapping: EntityMapping) -> NilTest? {
        guard case .comparison(let op, nil, let options, let left, let right) = filter.kind, options.isEmpty, op == .equal || op == .notEqual else { return nil }
        let tested: Expr
        switch (left.kind, right.kind) {
        case (_, .literal(.null)): tested = left
        case (.literal(.null), _): tested = right
        default: return nil
        }
        guard let attribute = sourceAttribute(read: tested, in: entityMapping) else { return nil }
        return NilTest(attribute: attribute, keepsNil: op == .equal)
    }

    /// Whether a source object passes its mapping's filter (true without one).
    func passesFilter(_ index: Int, _ source: SourceObject, mapping entityMapping: EntityMapping) throws -> Bool {
        guard let filter = entityMapping.filter else { return true }
        if let test = nilTests[index], let value = source.data.attributes[test.attribute] {
            return (value == .null) == test.keepsNil
        }
        return try evaluate(filter, for: source, mapping: entityMapping, property: "filter") { try $0.evaluatePredicate($1) }
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
