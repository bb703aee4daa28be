import Foundation

/// The members of an aggregate written wholly of literals (`{'a', 'b', 3, nil}`), worked out once
/// when it is parsed. A filter such as `code IN {…6,000 codes…}` built the list and scanned it for
/// every object (26 s over 50,000 objects); the list is now one value and `IN` asks a set of it,
/// taken under the comparison's options (`IN[c]` folds case) as `ValueSemantics.equal` takes them.
package final class LiteralMembers: @unchecked Sendable, Equatable {
    /// The aggregate's value: its members, in order.
    let collection: EvalValue
    /// The members.
    let values: [EvalValue]
    /// Whether a member is nil (a store's `IN` is then unknown, not false, for a value it lacks).
    let holdsNil: Bool
    /// Sets of the members, one per comparison options, made when first asked.
    private var sets: [ComparisonOptions: ValueSet] = [:]
    /// Guards `sets`: a parsed expression may be shared by threads.
    private let lock = NSLock()

    /// Fewer members are compared one by one: hashing text costs more than a few comparisons.
    static let smallestHashed = 16

    /// The members of an aggregate of `items`, or nil when one of them is not a literal.
    init?(_ items: [Expr]) {
        var values: [EvalValue] = []
        values.reserveCapacity(items.count)
        for item in items {
            guard case .literal(let literal) = item.kind else { return nil }
            values.append(.scalar(literal))
        }
        self.values = values
        self.collection = .collection(values, ordered: true)
        self.holdsNil = values.contains(where: \.isNull)
    }

    /// Whether a member equals `value` under `options`, as a scan with `ValueSemantics.equal` answers.
    func contains(_ value: EvalValue, options: ComparisonOptions) -> Bool {
        guard values.count >= Self.smallestHashed else { return values.contains { ValueSemantics.equal(value, $0, options: options) } }
        let set = lock.withLock {
            if let made = sets[options] { return made }
            let made = ValueSet(values, options: options)
            sets[options] = made
            return made
        }
        return set.contains(value)
    }

    /// Members are equal when their values are: the sets are made from them.
    package static func == (lhs: LiteralMembers, rhs: LiteralMembers) -> Bool {
        lhs.values == rhs.values
    }
}
