import Foundation
import MapcFoundation

/// Bounds that keep evaluation of hostile expressions finite.
package struct EvaluationLimits: Sendable {
    /// Nodes evaluated per top-level evaluation.
    package var maxSteps = 5_000_000
    /// Elements in any collection built during evaluation.
    package var maxCollectionCount = 1_000_000
    /// Characters in any string built during evaluation.
    package var maxStringLength = 16 * 1024 * 1024
    /// Creates the default limits.
    package init() {}
}

/// Everything an evaluation can see: the objects, the variables, and the migration hooks.
package struct EvaluationContext {
    /// Where key paths are read.
    package var graph: any ObjectGraph
    /// `SELF`.
    package var evaluatedObject: EvalValue
    /// `$name` bindings, without the `$` (`source`, `manager`, …).
    package var variables: [String: EvalValue]
    /// What `FUNCTION($manager, …)` calls; nil outside a migration. Held weakly: the migration
    /// owns its evaluators, never the other way round.
    package weak var manager: (any MigrationManagerFunctions)?
    /// What `FUNCTION($entityPolicy, "name:", …)` calls, by selector.
    package var policyFunctions: [String: PolicyFunction]
    /// The value of `now()`, fixed per run so results are reproducible.
    package var now: Date
    /// The source of `random()`.
    package var random: () -> Double
    /// Bounds on the work.
    package var limits: EvaluationLimits

    /// Creates a context. `$manager` and `$entityPolicy` are bound automatically.
    package init(graph: any ObjectGraph, evaluatedObject: EvalValue = .null, variables: [String: EvalValue] = [:],
                manager: (any MigrationManagerFunctions)? = nil, policyFunctions: [String: PolicyFunction] = [:],
                now: Date = Date(), random: @escaping () -> Double = { Double.random(in: 0..<1) }, limits: EvaluationLimits = EvaluationLimits()) {
        self.graph = graph
        self.evaluatedObject = evaluatedObject
        self.variables = ["manager": .handle(.manager), "entityPolicy": .handle(.entityPolicy)].merging(variables) { _, given in given }
        self.manager = manager
        self.policyFunctions = policyFunctions
        self.now = now
        self.random = random
        self.limits = limits
    }
}

/// A function name as written, with its argument count: what `NamedFunction.lookup` resolves.
struct FunctionSpelling: Hashable {
    var name: String
    var argumentCount: Int
}

/// Evaluates parsed expressions against an `EvaluationContext`. Errors are `ExpressionError`s
/// located at the node that failed; nothing traps, whatever the input.
package final class Evaluator {
    /// The context; variables change during SUBQUERY and are restored after.
    package var context: EvaluationContext
    var steps = 0
    /// Regular expressions already screened, with the reason each was refused (nil when safe).
    private var checkedPatterns = BoundedCache<String, String?>(capacity: 256)
    /// FETCH predicates already parsed, by text.
    var parsedPredicates = BoundedCache<String, Expr>(capacity: 64)
    /// FETCH results of predicates that read no variables, by entity and predicate: the graph
    /// does not change while an evaluator reads it.
    var fetchResults = BoundedCache<String, EvalValue>(capacity: 8)
    /// For `FETCH`es of `key == value`: the entity's objects and an index of their `key`, by
    /// entity and key (nil where a value is not a scalar: the predicate is then evaluated).
    var fetchIndexes = BoundedCache<String, (refs: [ObjectRef], index: ValueIndex)?>(capacity: 8)
    /// Whether a `FETCH`'s predicate is being evaluated: Core Data runs it as SQL, where a key of
    /// a to-many is a join (every value, nil included), not `valueForKey:`'s set.
    var evaluatesFetchPredicate = false
    /// Whether a store predicate is being evaluated (`evaluateStorePredicate`, a `FETCH`'s), so a
    /// `SUBQUERY`'s predicate inside it is three-valued too.
    var evaluatesStorePredicate = false
    /// Named functions already looked up, by spelling and argument count: a keyword spelling
    /// (`UPPERCASE`) is otherwise compared with every function's name on each call.
    var knownFunctions = BoundedCache<FunctionSpelling, NamedFunction>(capacity: 256)

    /// Creates an evaluator.
    package init(context: EvaluationContext) {
        self.context = context
    }

    /// Evaluates an expression to a value.
    package func evaluate(_ expression: Expr) throws -> EvalValue {
        steps = 0
        return try value(of: expression)
    }

    /// Evaluates an expression as a predicate: booleans as they are, nil as false, numbers as
    /// non-zero; anything else is an error.
    package func evaluatePredicate(_ expression: Expr) throws -> Bool {
        steps = 0
        return try truth(of: expression)
    }

    /// Evaluates a predicate as SQLite evaluates the SQL Core Data makes of a source fetch's
    /// predicate (a mapping's filter, a `FETCH`): a comparison with nil on a side that is not the
    /// literal nil is unknown (`street != "S1"` holds for no object without a street), as is `IN`
    /// a list holding nil that has no match, and `BETWEEN` a nil bound; `NOT` of unknown is
    /// unknown, `AND` and `OR` are SQL's three-valued ones, and unknown does not hold. `ANY`
    /// holds where a member's comparison holds, `ALL` where none is false, `NONE` where none
    /// holds (SQL's `EXISTS`); a `SUBQUERY` keeps the members its predicate holds for, so.
    package func evaluateStorePredicate(_ expression: Expr) throws -> Bool {
        steps = 0
        // A filter is a fetch's predicate too: a to-many key is a join there, as in `FETCH`.
        let saved = (evaluatesFetchPredicate, evaluatesStorePredicate)
        defer { (evaluatesFetchPredicate, evaluatesStorePredicate) = saved }
        (evaluatesFetchPredicate, evaluatesStorePredicate) = (true, true)
        return try storeTruth(of: expression) ?? false
    }

    /// A predicate's truth in SQL's three-valued logic: nil for unknown.
    func storeTruth(of expression: Expr) throws -> Bool? {
        switch expression.kind {
        case .not(let operand):
            return try storeTruth(of: operand).map { !$0 }
        case .and(let left, let right):
            let first = try storeTruth(of: left)
            if first == false { return false }
            let second = try storeTruth(of: right)
            if second == false { return false }
            return first == true && second == true ? true : nil
        case .or(let left, let right):
            let first = try storeTruth(of: left)
            if first == true { return true }
            let second = try storeTruth(of: right)
            if second == true { return true }
            return first == false && second == false ? false : nil
        case .comparison(let op, let modifier, let options, let leftExpression, let rightExpression)
            where leftExpression.kind != .literal(.null) && rightExpression.kind != .literal(.null):
            steps += 1
            let left = try value(of: leftExpression), right = try value(of: rightExpression)
            let literals = rightExpression.literalMembers
            guard let modifier else { return try storeComparison(op, options, left, right, literals, expression.range) }
            // A member's row each, joined as SQL joins them; the quantifier is an EXISTS, never unknown.
            let members = left.elements ?? (left.isNull ? [] : [left])
            switch modifier {
            case .anyOf: return try members.contains { try storeComparison(op, options, $0, right, literals, expression.range) == true }
            case .allOf: return try !members.contains { try storeComparison(op, options, $0, right, literals, expression.range) == false }
            case .noneOf: return try !members.contains { try storeComparison(op, options, $0, right, literals, expression.range) == true }
            }
        case .comparison(let op, nil, _, _, _) where [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op):
            // An order with the literal nil, which SQL compares as NULL: unknown.
            return nil
        default:
            return try truth(of: expression)
        }
    }

    /// One comparison as SQL has it: nil on either side is unknown (`x == nil`, the literal, is
    /// `IS NULL` and never comes here); `IN` a list holding nil without a match is unknown, and
    /// `BETWEEN` a nil bound is unknown where the other bound holds.
    private func storeComparison(_ op: ComparisonOperator, _ options: ComparisonOptions, _ left: EvalValue, _ right: EvalValue, _ literals: LiteralMembers?, _ range: SourceRange) throws -> Bool? {
        if left.isNull || right.isNull { return nil }
        switch op {
        case .inCollection:
            if let literals {
                steps += 1
                return literals.contains(left, options: options) ? true : (literals.holdsNil ? nil : false)
            }
            guard let items = right.elements else { break }
            if items.contains(where: { !$0.isNull && ValueSemantics.equal(left, $0, options: options) }) { return true }
            return items.contains(where: \.isNull) ? nil : false
        case .between:
            guard let bounds = right.elements, bounds.count == 2, bounds.contains(where: \.isNull) else { break }
            let low = bounds[0].isNull ? nil : try compareOne(.greaterOrEqual, options, left, bounds[0], range)
            let high = bounds[1].isNull ? nil : try compareOne(.lessOrEqual, options, left, bounds[1], range)
            return low == false || high == false ? false : nil
        default:
            break
        }
        return try compareOne(op, options, left, right, range)
    }

    // MARK: Core

    func failure(_ message: String, _ range: SourceRange, fix: String? = nil) -> ExpressionError {
        ExpressionError(message, at: range, fix: fix)
    }

    func truth(of expression: Expr) throws -> Bool {
        let result = try value(of: expression)
        switch result {
        case .scalar(.bool(let flag)): return flag
        case .scalar(.null): return false
        case .scalar(.integer(let n)): return n != 0
        case .scalar(.double(let d)): return d != 0
        case .scalar(.decimal(let d)): return d != 0
        default: throw failure("expected a predicate (true or false), found \(result.kindName)", expression.range)
        }
    }

    func checkSize(_ items: [EvalValue], _ range: SourceRange) throws -> [EvalValue] {
        if items.count > context.limits.maxCollectionCount {
            throw failure("a collection grew past \(context.limits.maxCollectionCount) elements", range)
        }
        return items
    }

    func value(of expression: Expr) throws -> EvalValue {
        steps += 1
        if steps > context.limits.maxSteps {
            throw failure("evaluation took more than \(context.limits.maxSteps) steps", expression.range, fix: "simplify the expression")
        }
        let range = expression.range
        switch expression.kind {
        case .literal(let literal):
            return .scalar(literal)
        case .aggregate(let items):
            if let literals = expression.literalMembers { return literals.collection }
            return .collection(try items.map(value(of:)), ordered: true)
        case .evaluatedObject:
            return context.evaluatedObject
        case .variable(let name):
            // Upper-casing allocates and variables are read per object: only a name of four
            // characters can upper-case to SELF (no character upper-cases to nothing).
            if name.count == 4, name.uppercased() == "SELF" { return context.evaluatedObject }
            guard let bound = context.variables[name] else {
                throw failure("unknown variable $\(name)", range, fix: Suggestions.didYouMean(name, in: context.variables.keys).map { $0.replacingOccurrences(of: "'", with: "'$", options: [], range: $0.range(of: "'")) }
                           ?? "available: \(context.variables.keys.sorted().map { "$" + $0 }.joined(separator: ", "))")
            }
            return bound
        case .keyPath(let root, let components):
            return try keyPath(try value(of: root), components[...])
        case .index(let base, let index):
            return try subscriptValue(try value(of: base), index, range)
        case .negate(let operand):
            switch ValueSemantics.negate(try value(of: operand)) {
            case .success(let result): return result
            case .failure(let error): throw failure(error.message, range)
            }
        case .binary(let op, let left, let right):
            return try binary(op, try value(of: left), try value(of: right), range)
        case .function(let name, let arguments):
            return try withinLimits(try function(name, arguments, range), range)
        case .method(let receiver, let selector, let selectorRange, let arguments):
            return try withinLimits(try method(try value(of: receiver), selector, selectorRange, try arguments.map(value(of:)), range, receiverExpression: receiver), range)
        case .ternary(let condition, let whenTrue, let whenFalse):
            return try truth(of: condition) ? value(of: whenTrue) : value(of: whenFalse)
        case .cast(let operand, let type):
            let value = try value(of: operand)
            return try cast(value, to: type, range, readsFloat: value.isDouble && readsFloatAttribute(operand))
        case .fetch(let request, _, _):
            return try fetch(try value(of: request), range)
        case .subquery(let collection, let variable, let predicate):
            let source = try value(of: collection)
            guard let items = source.elements ?? (source.isNull ? [] : nil) else {
                throw failure("SUBQUERY needs a collection, found \(source.kindName)", collection.range)
            }
            let saved = context.variables[variable]
            defer { context.variables[variable] = saved }
            var kept: [EvalValue] = []
            for item in items {
                context.variables[variable] = item
                if try evaluatesStorePredicate ? storeTruth(of: predicate) ?? false : truth(of: predicate) { kept.append(item) }
            }
            if case .collection(_, let ordered) = source { return .collection(kept, ordered: ordered) }
            return .collection(kept, ordered: false)
        case .comparison(let op, let modifier, let options, let left, let right):
            return .scalar(.bool(try comparison(op, modifier, options, left, right, range)))
        case .and(let left, let right):
            return .scalar(.bool(try truth(of: left) && truth(of: right)))
        case .or(let left, let right):
            return .scalar(.bool(try truth(of: left) || truth(of: right)))
        case .not(let operand):
            return .scalar(.bool(!(try truth(of: operand))))
        case .constantPredicate(let flag):
            return .scalar(.bool(flag))
        }
    }

    // MARK: Key paths

    func keyPath(_ start: EvalValue, _ components: ArraySlice<PathComponent>) throws -> EvalValue {
        var current = start
        var index = components.startIndex
        while index < components.endIndex {
            steps += 1
            switch components[index] {
            case .key(let name, let range):
                // `owner.items.@count` of every item: the count, without making the owner's list
                // of objects for each (quadratic for a list shared by all).
                if index + 2 == components.endIndex, case .collectionOperator(.count, _) = components[index + 1], case .object(let ref) = current,
                   context.graph.canRead(ref), let count = try context.graph.count(of: ref, key: name) {
                    return .scalar(.integer(Int64(count)))
                }
                current = try key(name, of: current, range)
            case .collectionOperator(let op, let range):
                return try collectionOperator(op, on: current, rest: components[(index + 1)...], range)
            }
            index += 1
        }
        return current
    }

    private func key(_ name: String, of target: EvalValue, _ range: SourceRange) throws -> EvalValue {
        switch target {
        case .object(let ref):
            guard context.graph.canRead(ref) else {
                throw failure("\(ref) is an object of the destination store; key paths read the source store's objects only", range,
                              fix: "read the value from the source object it was made from, such as \(ExpressionLiteral.sourceKey(name))")
            }
            guard let result = try context.graph.value(of: ref, key: name) else {
                throw failure("\(ref.entity.isEmpty ? "the object" : ref.entity) has no key '\(name)'", range,
                              fix: context.graph.propertyNames(of: ref).flatMap { Suggestions.didYouMean(name, in: $0) })
            }
            return result
        case .collection(let items, let ordered):
            // Key-value coding on collections: the key of every element, nested collections flattened.
            var result: [EvalValue] = []
            for item in items {
                let member = try key(name, of: item, range)
                if let nested = member.elements { result.append(contentsOf: nested) } else { result.append(member) }
            }
            // Of a set (an unordered to-many, Core Data's NSSet) a set, as `valueForKey:` makes
            // one: each value once, and no nil. An array (a fetch's results, a literal) keeps all.
            if !ordered && !evaluatesFetchPredicate { result = distinct(result.filter { !$0.isNull }) }
            return .collection(try checkSize(result, range), ordered: ordered)
        case .scalar(.null):
            return .null
        case .scalar(.string(let text)) where name == "length":
            return .scalar(.integer(Int64(ValueRules.length(of: text))))
        case .scalar(.binary(let data)) where name == "length":
            return .scalar(.integer(Int64(data.count)))
        case .handle(.manager) where name == "sourceContext":
            return .handle(.sourceContext)
        case .handle(.manager) where name == "destinationContext":
            return .handle(.destinationContext)
        case .handle(.entityMapping(let mappingName, let sourceEntity, let destinationEntity, let userInfo)) where MappingKeys.entityMapping.contains(name):
            switch name {
            case "name": return .scalar(.string(mappingName))
            case "sourceEntityName": return sourceEntity.map { .scalar(.string($0)) } ?? .null
            case "destinationEntityName": return destinationEntity.map { .scalar(.string($0)) } ?? .null
            default: return .handle(.userInfo(userInfo))
            }
        case .handle(.propertyMapping(let propertyName)) where MappingKeys.propertyMapping.contains(name):
            return .scalar(.string(propertyName))
        case .handle(.userInfo(let userInfo)):
            return userInfo[name].map { .scalar(.string($0)) } ?? .null
        default:
            throw failure("cannot read key '\(name)' of \(target.kindName)", range)
        }
    }

    private func collectionOperator(_ op: CollectionOperator, on target: EvalValue, rest: ArraySlice<PathComponent>, _ range: SourceRange) throws -> EvalValue {
        // After a nil to-one (`owner.pets.@count` of a pet without an owner) nil, as key-value
        // coding's `valueForKeyPath:` gives (a message to nil); a fetch's SQL counts no rows there.
        if target.isNull && !evaluatesFetchPredicate { return .null }
        guard let items = target.elements ?? (target.isNull ? [] : nil) else {
            throw failure("@\(op.rawValue) needs a collection, found \(target.kindName)", range)
        }
        if op == .count {
            guard rest.isEmpty else { throw failure("nothing can follow @count", rest.first!.range) }
            return .scalar(.integer(Int64(items.count)))
        }
        let mapped = try rest.isEmpty ? items : items.map { try keyPath($0, rest) }
        switch op {
        case .count:
            return .scalar(.integer(Int64(items.count)))
        case .sum, .avg:
            // As key-value coding's operators do: each nil counts as 0 (in the mean's count too).
            // A fetch's predicate is SQL, whose `avg()` leaves NULL out, and is NULL of none.
            if op == .avg && evaluatesFetchPredicate {
                let present = mapped.filter { !$0.isNull }
                if present.isEmpty { return .null }
                for item in present where ValueSemantics.number(item) == nil { throw failure("@avg needs numbers, found \(item.kindName)", range) }
                switch ValueSemantics.mean(present) {
                case .success(let mean): return mean
                case .failure(let error): throw failure("@avg: \(error.message)", range)
                }
            }
            let numbers = mapped.map { $0.isNull ? EvalValue.scalar(.integer(0)) : $0 }
            for item in numbers where ValueSemantics.number(item) == nil {
                throw failure("@\(op.rawValue) needs numbers, found \(item.kindName)", range)
            }
            if op == .avg {
                switch ValueSemantics.mean(numbers) {
                case .success(let mean): return mean
                case .failure(let error): throw failure("@avg: \(error.message)", range)
                }
            }
            return try numbers.reduce(EvalValue.scalar(.integer(0))) { try binary(.add, $0, $1, range) }
        case .min, .max:
            var best: EvalValue?
            for item in mapped where !item.isNull {
                guard let current = best else { best = item; continue }
                guard let order = ValueSemantics.compare(item, current) else {
                    throw failure("@\(op.rawValue) cannot order \(item.kindName) and \(current.kindName)", range)
                }
                if (op == .min && order == .orderedAscending) || (op == .max && order == .orderedDescending) { best = item }
            }
            return best ?? .null
        case .unionOfObjects, .distinctUnionOfObjects:
            let values = mapped.filter { !$0.isNull }
            return .collection(op == .distinctUnionOfObjects ? distinct(values) : values, ordered: op == .unionOfObjects)
        case .unionOfSets, .distinctUnionOfSets, .unionOfArrays, .distinctUnionOfArrays:
            var values: [EvalValue] = []
            for item in mapped where !item.isNull {
                if let nested = item.elements { values.append(contentsOf: nested.filter { !$0.isNull }) } else { values.append(item) }
            }
            let distinctResult = op == .distinctUnionOfSets || op == .distinctUnionOfArrays || op == .unionOfSets
            return .collection(try checkSize(distinctResult ? distinct(values) : values, range), ordered: op == .unionOfArrays || op == .distinctUnionOfArrays)
        }
    }

    func distinct(_ values: [EvalValue]) -> [EvalValue] {
        var seen = ValueSet([])
        return values.filter { seen.insert($0) }
    }

    private func subscriptValue(_ base: EvalValue, _ index: IndexKind, _ range: SourceRange) throws -> EvalValue {
        if base.isNull { return .null }
        guard let items = base.elements else { throw failure("cannot index \(base.kindName); only collections have elements", range) }
        switch index {
        case .first: return items.first ?? .null
        case .last: return items.last ?? .null
        case .size: return .scalar(.integer(Int64(items.count)))
        case .expression(let indexExpression):
            let position = try value(of: indexExpression)
            guard case .scalar(.integer(let n)) = position else {
                throw failure("an index must be a whole number, found \(position.kindName)", indexExpression.range)
            }
            guard n >= 0, n < items.count else {
                throw failure("index \(n) is out of range for a collection of \(items.count)", indexExpression.range, fix: "use [FIRST], [LAST] or check [SIZE] first")
            }
            return items[Int(n)]
        }
    }

    /// A result, once it is known to be no longer than the limit a string may grow to (a
    /// function or method can make one longer than its input: `uppercaseString` of "ß" is "SS").
    func withinLimits(_ result: EvalValue, _ range: SourceRange) throws -> EvalValue {
        // UTF-8 bytes, counted at once, are never fewer than UTF-16 units: most results end here.
        if case .scalar(.string(let text)) = result, text.utf8.count > context.limits.maxStringLength, ValueRules.length(of: text) > context.limits.maxStringLength {
            throw failure("a string grew past \(context.limits.maxStringLength) characters", range)
        }
        return result
    }

    // MARK: Operators

    func binary(_ op: BinaryOperator, _ left: EvalValue, _ right: EvalValue, _ range: SourceRange) throws -> EvalValue {
        switch op {
        case .union, .intersect, .minus:
            guard let a = left.elements ?? (left.isNull ? [] : nil), let b = right.elements ?? (right.isNull ? [] : nil) else {
                throw failure("\(op.rawValue) needs two collections, found \(left.kindName) and \(right.kindName)", range)
            }
            let rightSet = ValueSet(b)
            switch op {
            case .union: return .collection(try checkSize(distinct(a + b), range), ordered: false)
            case .intersect: return .collection(distinct(a.filter { rightSet.contains($0) }), ordered: false)
            default: return .collection(distinct(a.filter { !rightSet.contains($0) }), ordered: false)
            }
        default:
            switch ValueSemantics.arithmetic(op, left, right) {
            case .success(let result):
                _ = try withinLimits(result, range)
                if case .scalar(.decimal(let number)) = result, number.isNaN {
                    if let nan = [left, right].first(where: \.isNaN) {
                        throw failure("'\(op.rawValue)' of \(nan.kindName) has no result: leave such objects out with a filter (a NaN is the one value not equal to itself: `amount == amount`), or give them a value in a policy", range)
                    }
                    throw failure("decimal arithmetic overflowed or underflowed: the result is beyond what a decimal holds (38 digits, exponents -128 to 127)", range)
                }
                return result
            case .failure(let error): throw failure(error.message, range)
            }
        }
    }

    private func comparison(_ op: ComparisonOperator, _ modifier: QuantifierModifier?, _ options: ComparisonOptions, _ leftExpression: Expr, _ rightExpression: Expr, _ range: SourceRange) throws -> Bool {
        let left = try value(of: leftExpression)
        let right = try value(of: rightExpression)
        let literals = rightExpression.literalMembers
        guard let modifier else { return try compareOne(op, options, left, right, range, literals: literals) }
        let items = left.elements ?? (left.isNull ? [] : [left])
        switch modifier {
        case .anyOf: return try items.contains { try compareOne(op, options, $0, right, range, literals: literals) }
        case .allOf: return try items.allSatisfy { try compareOne(op, options, $0, right, range, literals: literals) }
        case .noneOf: return try !items.contains { try compareOne(op, options, $0, right, range, literals: literals) }
        }
    }

    /// One comparison of two values; `literals` is the right side's members when it was written as
    /// an aggregate of literals (`IN` then asks them by hash).
    func compareOne(_ op: ComparisonOperator, _ options: ComparisonOptions, _ left: EvalValue, _ right: EvalValue, _ range: SourceRange, literals: LiteralMembers? = nil) throws -> Bool {
        steps += 1
        switch op {
        case .equal: return ValueSemantics.equal(left, right, options: options)
        case .notEqual: return !ValueSemantics.equal(left, right, options: options)
        case .less: return ValueSemantics.compare(left, right, options: options) == .orderedAscending
        // Two nils are ordered alike, as NSPredicate's `<=` and `>=` answer (a store's SQL does
        // not: `storeComparison`).
        case .lessOrEqual where left.isNull && right.isNull, .greaterOrEqual where left.isNull && right.isNull: return true
        case .lessOrEqual: return [.orderedAscending, .orderedSame].contains(ValueSemantics.compare(left, right, options: options))
        case .greater: return ValueSemantics.compare(left, right, options: options) == .orderedDescending
        case .greaterOrEqual: return [.orderedDescending, .orderedSame].contains(ValueSemantics.compare(left, right, options: options))
        case .between:
            guard let bounds = right.elements, bounds.count == 2 else {
                throw failure("BETWEEN needs two bounds, such as BETWEEN {1, 10}; found \(right.kindName)", range)
            }
            return [.orderedDescending, .orderedSame].contains(ValueSemantics.compare(left, bounds[0], options: options))
                && [.orderedAscending, .orderedSame].contains(ValueSemantics.compare(left, bounds[1], options: options))
        case .inCollection:
            if right.isNull { return false }
            if let literals { return literals.contains(left, options: options) }
            if let items = right.elements { return items.contains { ValueSemantics.equal(left, $0, options: options) } }
            if case .scalar(.string(let haystack)) = right {
                // A substring test, as CONTAINS with its sides swapped: nil is in no text.
                if left.isNull { return false }
                guard case .scalar(.string(let needle)) = left else {
                    throw failure("IN a string tests for a part of it, which needs a string on the left, found \(left.kindName)", range)
                }
                return ValueSemantics.textContains(ValueSemantics.fold(haystack, options), ValueSemantics.fold(needle, options))
            }
            throw failure("IN needs a collection or a string on its right, found \(right.kindName)", range)
        case .contains:
            // Membership, as IN tests it (nil is a member of a collection holding nil).
            if let items = left.elements { return items.contains { ValueSemantics.equal($0, right, options: options) } }
            if left.isNull || right.isNull { return false }
            return try strings(op, options, left, right, range, ValueSemantics.textContains)
        case .beginsWith:
            return try strings(op, options, left, right, range, ValueSemantics.textHasPrefix)
        case .endsWith:
            return try strings(op, options, left, right, range, ValueSemantics.textHasSuffix)
        case .like:
            guard case .scalar(.string(let text)) = left, case .scalar(.string(let pattern)) = right else {
                if left.isNull || right.isNull { return false }
                throw failure("LIKE compares strings, found \(left.kindName) and \(right.kindName)", range)
            }
            var budget = context.limits.maxSteps - steps
            let outcome: Bool?
            switch ValueSemantics.like(text, pattern, options: options, budget: &budget) {
            case .success(let matched): outcome = matched
            case .failure(let error): throw failure(error.message, range)
            }
            guard let matched = outcome else {
                throw failure("LIKE took more than \(context.limits.maxSteps) steps on a \(text.count)-character string", range, fix: "use a shorter pattern or string, or BEGINSWITH/CONTAINS")
            }
            steps = context.limits.maxSteps - budget
            return matched
        case .matches:
            guard case .scalar(.string(let text)) = left, case .scalar(.string(let pattern)) = right else {
                if left.isNull || right.isNull { return false }
                throw failure("MATCHES compares a string with a pattern string, found \(left.kindName) and \(right.kindName)", range)
            }
            // `[d]` folds the pattern as the text, as NSPredicate folds both (a regular expression's
            // syntax has no accents to lose, though width folding makes `（` a `(`): the pattern
            // screened is the one that runs. `[c]` is ICU's case-insensitive matching.
            let diacritics = options.intersection([.diacriticInsensitive])
            let folded = ValueSemantics.fold(pattern, diacritics)
            let screened: String?
            if let known = checkedPatterns[folded] { screened = known } else {
                screened = RegexGuard.problem(with: folded)
                checkedPatterns[folded] = .some(screened)
            }
            if let problem = screened { throw failure("MATCHES pattern refused: \(problem)", range) }
            guard ValueRules.length(of: text) <= RegexGuard.maxSubjectLength else {
                throw failure("MATCHES runs on strings of at most \(RegexGuard.maxSubjectLength) characters; this one has \(ValueRules.length(of: text))", range)
            }
            let subject = ValueSemantics.fold(text, diacritics)
            switch RegexGuard.match(subject, folded, caseInsensitive: options.contains(.caseInsensitive)) {
            case .matches: return true
            case .doesNotMatch: return false
            case .gaveUp: throw failure("MATCHES has no answer: \(RegexGuard.gaveUpMessage(pattern))", range)
            }
        }
    }

    private func strings(_ op: ComparisonOperator, _ options: ComparisonOptions, _ left: EvalValue, _ right: EvalValue, _ range: SourceRange, _ test: (String, String) -> Bool) throws -> Bool {
        if left.isNull || right.isNull { return false }
        guard case .scalar(.string(let a)) = left, case .scalar(.string(let b)) = right else {
            throw failure("\(op.rawValue) compares strings, found \(left.kindName) and \(right.kindName)", range)
        }
        return test(ValueSemantics.fold(a, options), ValueSemantics.fold(b, options))
    }
}
