/// A node of a parsed expression or predicate, with the source range of its text.
///
/// Predicates are expressions of boolean type: one grammar covers both NSExpression and
/// NSPredicate format strings, so `TERNARY(image != nil, 1, 0)` and `(a + b) > 3` parse alike.
package struct Expr: Sendable, Equatable {
    /// What the node is.
    package var kind: Kind
    /// The text it was parsed from.
    package var range: SourceRange
    /// Whether the text wrapped it in parentheses (used to warn about unparenthesised AND/OR mixes).
    var parenthesized = false
    /// For an aggregate of literals only: its members, worked out once (`IN` asks them by hash).
    package var literalMembers: LiteralMembers?

    /// Creates a node.
    package init(_ kind: Kind, _ range: SourceRange) {
        self.kind = kind
        self.range = range
    }

    /// Node kinds. Shaped for a later SQL compiler: key paths, comparisons, arithmetic and
    /// function calls are explicit nodes, never strings.
    package indirect enum Kind: Sendable, Equatable {
        /// A constant: number, string, boolean or nil.
        case literal(Value)
        /// `{a, b, c}`.
        case aggregate([Expr])
        /// `SELF`: the object being evaluated.
        case evaluatedObject
        /// `$name`.
        case variable(String)
        /// `root.key.@op.key`: components applied left to right to the root's value.
        case keyPath(root: Expr, components: [PathComponent])
        /// `base[index]`, `base[FIRST]`, `base[LAST]`, `base[SIZE]`.
        case index(base: Expr, index: IndexKind)
        /// `-x`.
        case negate(Expr)
        /// `a + b`, `a UNION b`, …
        case binary(BinaryOperator, Expr, Expr)
        /// A named NSExpression function: `sum:({1,2})`, `uppercase:('a')`, `MAX(1, 5, 10)`, `now()`.
        case function(name: String, arguments: [Expr])
        /// `FUNCTION(receiver, "selector:", arguments…)`.
        case method(receiver: Expr, selector: String, selectorRange: SourceRange, arguments: [Expr])
        /// `TERNARY(predicate, a, b)`.
        case ternary(Expr, Expr, Expr)
        /// `CAST(value, "NSString")`.
        case cast(Expr, type: String)
        /// `FETCH(request, context, includesPendingChanges)`.
        case fetch(request: Expr, context: Expr, includesPending: Expr)
        /// `SUBQUERY(collection, $x, predicate)`.
        case subquery(collection: Expr, variable: String, predicate: Expr)
        /// `a == b`, `ANY tags.name BEGINSWITH[cd] 'x'`, `a BETWEEN {lo, hi}`.
        case comparison(ComparisonOperator, modifier: QuantifierModifier?, options: ComparisonOptions, Expr, Expr)
        case and(Expr, Expr)
        case or(Expr, Expr)
        case not(Expr)
        /// TRUEPREDICATE / FALSEPREDICATE.
        case constantPredicate(Bool)
    }
}

/// One step of a key path.
package enum PathComponent: Sendable, Equatable {
    /// A property name (or a KVC key such as `length`).
    case key(String, SourceRange)
    /// A collection operator: `@count`, `@sum`, `@avg`, `@min`, `@max`, `@distinctUnionOfObjects`,
    /// `@unionOfObjects`, `@distinctUnionOfSets`, `@unionOfSets`, `@distinctUnionOfArrays`, `@unionOfArrays`.
    case collectionOperator(CollectionOperator, SourceRange)

    var range: SourceRange {
        switch self {
        case .key(_, let range), .collectionOperator(_, let range): return range
        }
    }

    /// The components of a key path written as text (`valueForKeyPath:`'s argument), all placed at `range`.
    package static func components(of path: String, at range: SourceRange) -> [PathComponent] {
        path.split(separator: ".", omittingEmptySubsequences: false).map { part in
            if part.hasPrefix("@"), let op = CollectionOperator(rawValue: String(part.dropFirst())) { return .collectionOperator(op, range) }
            return .key(String(part), range)
        }
    }
}

/// Key-value coding collection operators.
package enum CollectionOperator: String, Sendable, CaseIterable {
    case count, sum, avg, min, max
    case distinctUnionOfObjects, unionOfObjects, distinctUnionOfSets, unionOfSets, distinctUnionOfArrays, unionOfArrays
}

/// What goes between square brackets.
package enum IndexKind: Sendable, Equatable {
    case expression(Expr)
    case first, last, size
}

/// Arithmetic and set operators.
package enum BinaryOperator: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", power = "**"
    case union = "UNION", intersect = "INTERSECT", minus = "MINUS"
}

/// Comparison operators.
package enum ComparisonOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case between = "BETWEEN", inCollection = "IN", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case contains = "CONTAINS", like = "LIKE", matches = "MATCHES"

    /// Whether the operator compares strings (and so takes `[c]`, `[d]` options).
    var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: return true
        default: return false
        }
    }
}

/// `ANY`/`SOME`, `ALL`, `NONE` before a comparison.
package enum QuantifierModifier: String, Sendable {
    case anyOf = "ANY", allOf = "ALL", noneOf = "NONE"
}

/// `[c]` case-insensitive, `[d]` diacritic-insensitive, `[n]` normalized, `[l]` locale-sensitive.
package struct ComparisonOptions: OptionSet, Sendable, Hashable {
    /// The options as bits.
    package let rawValue: Int
    /// Options from their bits.
    package init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: letters compare without case.
    package static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: letters compare without accents.
    static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    /// `[n]`: strings are taken as already normalized and compared literally; it supersedes
    /// `[c]` and `[d]`, as Apple's does (the parser drops them).
    static let normalized = ComparisonOptions(rawValue: 4)
    /// `[l]`: locale-sensitive (accepted; mapc compares the same in every locale).
    static let localeSensitive = ComparisonOptions(rawValue: 8)
}

extension Expr {
    /// The expression's direct sub-expressions, in source order.
    package var children: [Expr] {
        switch kind {
        case .literal, .evaluatedObject, .variable, .constantPredicate: return []
        case .aggregate(let items): return items
        case .keyPath(let root, _): return [root]
        case .index(let base, let index):
            if case .expression(let inner) = index { return [base, inner] }
            return [base]
        case .negate(let operand), .not(let operand), .cast(let operand, _): return [operand]
        case .binary(_, let left, let right), .and(let left, let right), .or(let left, let right), .comparison(_, _, _, let left, let right): return [left, right]
        case .function(_, let arguments): return arguments
        case .method(let receiver, _, _, let arguments): return [receiver] + arguments
        case .ternary(let condition, let whenTrue, let whenFalse): return [condition, whenTrue, whenFalse]
        case .fetch(let request, let context, let includesPending): return [request, context, includesPending]
        case .subquery(let collection, _, let predicate): return [collection, predicate]
        }
    }

    /// Whether the expression reads any `$variable` it does not bind itself (SUBQUERY binds one);
    /// `SELF` and `$SELF` do not count. Walked without recursion, so any depth is safe.
    var readsVariables: Bool {
        var pending: [(Expr, Set<String>)] = [(self, [])]
        while let (expression, bound) = pending.popLast() {
            switch expression.kind {
            case .variable(let name) where name.uppercased() != "SELF" && !bound.contains(name):
                return true
            case .subquery(let collection, let variable, let predicate):
                pending.append((collection, bound))
                pending.append((predicate, bound.union([variable])))
            default:
                pending += expression.children.map { ($0, bound) }
            }
        }
        return false
    }
}

extension Expr {
    /// The first node found below `limit` levels, or nil when the tree is no taller: measured
    /// without recursion, so a hostile tree cannot exhaust the stack while being measured.
    func firstNode(deeperThan limit: Int) -> Expr? {
        var pending: [(Expr, Int)] = [(self, 1)]
        while let (expression, depth) = pending.popLast() {
            if depth > limit { return expression }
            pending += expression.children.map { ($0, depth + 1) }
        }
        return nil
    }
}
