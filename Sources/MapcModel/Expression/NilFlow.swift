/// Where an expression's result can be nil: what `check` warns about when the result goes into a
/// required attribute without a default (an object that gets nil fails validation at run time,
/// after the work of the step). The analysis is of the expression's form: a key path through an
/// optional attribute or to-one relationship can be nil, and so is what it flows into (arithmetic,
/// functions, a method on it, a cast, a count of it), unless a `TERNARY` tests it against nil
/// first; predicates, collections and calls on `$manager` or `$entityPolicy` are taken as never nil.
extension ExpressionChecker {
    /// The first read in `expression` that can make its result nil (an optional key path, or a
    /// `nil` constant), or nil when none can.
    package func firstNilSource(in expression: Expr, guarded: Set<String> = []) -> Expr? {
        switch expression.kind {
        case .literal(.null):
            return expression
        case .literal, .aggregate, .evaluatedObject, .variable, .comparison, .and, .or, .not, .constantPredicate, .subquery, .fetch:
            return nil
        case .index(let base, let kind):
            // `[SIZE]` is a count, nil only where the list is (after a nil to-one); an element
            // (`[FIRST]`, `[LAST]`, `[i]`) of an empty collection is nil.
            if case .size = kind { return firstNilSource(in: base, guarded: guarded) }
            return expression
        case .keyPath:
            let known = guarded.union(nonNilKeys)
            let whole = Self.key(of: expression).map(known.contains) ?? false
            return !whole && keyPathCanBeNil(expression, known: known) ? expression : nil
        case .negate(let operand), .cast(let operand, _):
            return firstNilSource(in: operand, guarded: guarded)
        case .binary(_, let left, let right):
            return firstNilSource(in: left, guarded: guarded) ?? firstNilSource(in: right, guarded: guarded)
        case .function(_, let arguments):
            return arguments.lazy.compactMap { firstNilSource(in: $0, guarded: guarded) }.first
        case .method(let receiver, _, _, _):
            if case .variable(let name) = receiver.kind, name == "manager" || name == "entityPolicy" { return nil }
            return firstNilSource(in: receiver, guarded: guarded)
        case .ternary(let condition, let whenTrue, let whenFalse):
            return firstNilSource(in: whenTrue, guarded: guarded.union(Self.nonNil(where: condition, holds: true)))
                ?? firstNilSource(in: whenFalse, guarded: guarded.union(Self.nonNil(where: condition, holds: false)))
        }
    }

    /// Why `read` (what `firstNilSource` found, written `text`) can be nil, as `check` and the
    /// editor's hover say it.
    package static func whyNil(_ read: Expr, text: String) -> String {
        if read.kind == .literal(.null) { return "the nil chosen here" }
        if case .keyPath(_, let components) = read.kind,
           let op = components.lazy.compactMap({ component -> CollectionOperator? in if case .collectionOperator(let op, _) = component { return op } else { return nil } }).first {
            return "\(text) is nil where the collection is empty" + (op == .avg ? "" : " or its values are all nil")
        }
        return "\(text) is optional"
    }

    /// In a filter (which runs as Core Data's fetch, in SQL's logic), the tests that leave out the
    /// objects whose key path is nil too, unlike what they read as: `notes != "delete me"` (and
    /// `NOT (notes == …)`, `NOT (notes IN …)`, `NOT (notes CONTAINS …)`, `NOT (count > 5)`: any
    /// test under NOT but `!=`) of a key path that can be nil, against a value,
    /// where the filter does not test that key path against nil itself. Each with its key path.
    package func testsLeavingOutNil(in filter: Expr) -> [(test: Expr, keyPath: Expr)] {
        var mentioned: Set<String> = []
        func collectNilTests(_ expression: Expr) {
            if case .comparison(_, nil, _, let left, let right) = expression.kind {
                if case .literal(.null) = right.kind, let key = Self.key(of: left) { mentioned.insert(key) }
                if case .literal(.null) = left.kind, let key = Self.key(of: right) { mentioned.insert(key) }
            }
            expression.children.forEach(collectNilTests)
        }
        collectNilTests(filter)
        var found: [(Expr, Expr)] = []
        func isValue(_ expression: Expr) -> Bool {
            switch expression.kind {
            case .literal(.null): return false
            case .literal, .aggregate: return true
            default: return false
            }
        }
        func candidate(_ comparison: Expr) -> Expr? {
            guard case .comparison(_, nil, _, let left, let right) = comparison.kind else { return nil }
            let path = isValue(right) ? left : right
            guard isValue(path == left ? right : left), let key = Self.key(of: path), !mentioned.contains(key),
                  keyPathCanBeNil(path, known: []) else { return nil }
            return path
        }
        func walk(_ expression: Expr, negated: Bool) {
            switch expression.kind {
            case .comparison(let op, nil, _, _, _):
                // Under NOT, every test but `!=` reads as "all but those" (`NOT (name CONTAINS
                // "saving")`, `NOT (d > 5)`), and leaves out nil: NOT of unknown is unknown.
                let excluding = negated ? op != .notEqual : op == .notEqual
                if excluding, let path = candidate(expression) { found.append((expression, path)) }
            case .not(let inner): walk(inner, negated: !negated)
            case .and(let left, let right), .or(let left, let right):
                walk(left, negated: negated)
                walk(right, negated: negated)
            default: break
            }
        }
        walk(filter, negated: false)
        return found
    }

    /// A key path from the object evaluated, as `$source.note.body` (`note.body` and
    /// `SELF.note.body` are the same path): how a path is recognised where a condition tests it.
    static func key(of expression: Expr) -> String? {
        guard case .keyPath(let root, let components) = expression.kind else { return nil }
        switch root.kind {
        case .evaluatedObject: break
        case .variable(let name) where name == "source": break
        default: return nil
        }
        var names: [String] = []
        for component in components {
            guard case .key(let name, _) = component else { return nil }
            names.append(name)
        }
        return "$source." + names.map(ExpressionLiteral.key).joined(separator: ".")
    }

    /// The key paths that are not nil where a condition is true (`holds`) or false: `x != nil`
    /// when true, `x == nil` when false, a key path compared with a value nil never meets when
    /// true (`x.length > 0`, `x == "a"`, `x IN {"a", "b"}`: each is false of a nil `x`, and of a
    /// nil anywhere along its path, where `x != "a"` is true), both sides of an AND that is true,
    /// both of an OR that is false (`TERNARY(a == nil OR b == nil, "none", a + b)`), and through
    /// NOT. A filter's (`image != nil`) hold for every object a mapping reads.
    package static func nonNil(where condition: Expr, holds: Bool) -> Set<String> {
        switch condition.kind {
        case .comparison(let op, nil, _, let left, let right) where op == (holds ? .notEqual : .equal)
            && (left.kind == .literal(.null) || right.kind == .literal(.null)):
            if case .literal(.null) = right.kind { return Set([key(of: left)].compactMap { $0 }) }
            return Set([key(of: right)].compactMap { $0 })
        case .comparison(let op, nil, _, let left, let right) where holds && op != .notEqual:
            // Only a path of plain keys: a nil one gives nil all the way (`@count` of nil is 0 in a filter's SQL).
            guard let path = isValueNotNil(right) ? key(of: left) : isValueNotNil(left) ? key(of: right) : nil else { return [] }
            let names = path.split(separator: ".")
            return Set((2...max(2, names.count)).map { names.prefix($0).joined(separator: ".") })
        case .and(let left, let right) where holds:
            return nonNil(where: left, holds: true).union(nonNil(where: right, holds: true))
        case .or(let left, let right) where !holds:
            return nonNil(where: left, holds: false).union(nonNil(where: right, holds: false))
        case .not(let inner):
            return nonNil(where: inner, holds: !holds)
        default:
            return []
        }
    }

    /// Whether an expression is a value, or a list of values, with no nil in it.
    private static func isValueNotNil(_ expression: Expr) -> Bool {
        switch expression.kind {
        case .literal(let value): return !value.isNull
        case .aggregate(let items): return items.allSatisfy(isValueNotNil)
        default: return false
        }
    }

    /// Whether a key path from `$source` or `SELF` passes through an optional attribute or an
    /// optional to-one relationship (a to-many one makes a collection, which is never nil), not
    /// counting a part of the path a condition tests against nil first (`known`: `note != nil`
    /// guards `note.title`).
    private func keyPathCanBeNil(_ expression: Expr, known: Set<String>) -> Bool {
        guard case .keyPath(let root, let components) = expression.kind, let schema = scope.schema else { return false }
        let start: ExprType
        switch root.kind {
        // An element of a collection (`attachments[FIRST].caption`) is nil when it is empty.
        case .index(_, let kind): if case .size = kind { return false } else { return true }
        case .evaluatedObject: start = scope.evaluatedObject
        case .variable(let name): start = scope.variables[name] ?? .unknown
        default: return false
        }
        guard case .object(var entityName) = start else { return false }
        var prefix = "$source"
        // After a to-many, a collection operator: `@avg`, `@min` and `@max` of nothing are nil
        // (where `@count` and `@sum` are 0), and `@min`/`@max` of values all nil.
        var manyMayBeEmpty: Bool?, extreme = false
        for component in components {
            if case .collectionOperator(let op, _) = component, let mayBeEmpty = manyMayBeEmpty {
                switch op {
                case .avg: return mayBeEmpty
                case .min, .max:
                    if mayBeEmpty { return true }
                    extreme = true
                    continue
                default: return false
                }
            }
            guard case .key(let name, _) = component, let entity = schema.entity(named: entityName) else { return false }
            prefix += "." + name
            switch schema.property(named: name, in: entity) {
            case .attribute(let attribute)?:
                return attribute.isOptional && (extreme || manyMayBeEmpty == nil) && !known.contains(prefix)
            case .relationship(let relationship)?:
                if relationship.isToMany {
                    // A required to-many holds one object or more (validation's rule).
                    guard components.contains(where: { if case .collectionOperator = $0 { return true } else { return false } }) else { return false }
                    manyMayBeEmpty = (manyMayBeEmpty ?? false) || relationship.isOptional
                } else if relationship.isOptional && !known.contains(prefix) && manyMayBeEmpty == nil {
                    return true
                }
                entityName = relationship.destination
            case nil:
                return false
            }
        }
        return false
    }
}
