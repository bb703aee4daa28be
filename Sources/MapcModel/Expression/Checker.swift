import Foundation
import MapcFoundation

/// Type-checks an expression against a schema and the variables in scope, without running it.
///
/// Reports unknown keys (with "did you mean"), type mismatches, unknown functions and selectors,
/// wrong arity, to-many key paths where a single value is needed, unsafe regular expressions,
/// unparenthesised AND/OR mixes (a warning), and results an attribute cannot hold.
public struct ExpressionChecker {
    /// The scope checked against.
    public var scope: CheckScope
    /// Where the expression's text is, for positions.
    public let source: ExpressionSource
    /// Problems found so far.
    public private(set) var diagnostics: [Diagnostic] = []
    /// Key paths (`$source.image`) known not to be nil for every object evaluated: those the
    /// entity mapping's filter tests against nil.
    public var nonNilKeys: Set<String> = []

    /// Creates a checker.
    public init(scope: CheckScope, source: ExpressionSource) {
        self.scope = scope
        self.source = source
    }

    private mutating func error(_ message: String, _ range: SourceRange, fix: String? = nil) {
        diagnostics.append(source.diagnostic(.error, message, at: range, fix: fix))
    }

    private mutating func warning(_ message: String, _ range: SourceRange, fix: String? = nil) {
        diagnostics.append(source.diagnostic(.warning, message, at: range, fix: fix))
    }

    // MARK: Entry points

    /// Checks a value expression and returns its type.
    @discardableResult
    public mutating func check(_ expression: Expr) -> ExprType {
        type(of: expression)
    }

    /// Checks that an expression is a predicate.
    public mutating func checkPredicate(_ expression: Expr) {
        let result = type(of: expression)
        switch result {
        case .bool, .unknown, .null, .integer, .double, .decimal: break
        default: error("expected a predicate (true or false), but this is \(article(result))", expression.range, fix: "compare it, for example 'image != nil'")
        }
    }

    /// Checks an expression whose result is stored in `attribute`.
    public mutating func checkAssignable(_ expression: Expr, to attribute: Attribute, entity: String) {
        let result = type(of: expression)
        let target = "attribute '\(entity).\(attribute.name)' (\(attribute.type.rawValue))"
        // After the type's diagnostics: a value that can be nil, going where nil fails validation
        // once the step has done its work.
        defer {
            if !attribute.isOptional, attribute.defaultValue == nil, result != .null, let read = firstNilSource(in: expression) {
                let text = source.text.unicodeScalarsSlice(read.range), whole = source.text.unicodeScalarsSlice(expression.range)
                let isConstant = read.kind == .literal(.null)
                warning("\(target) is required, but this can be nil (\(isConstant ? "the nil chosen here" : "\(text) is optional")): an object that gets nil fails validation when the step runs", read.range,
                        fix: isConstant ? "choose a value instead of nil, or give '\(attribute.name)' a default in the schema"
                            : "say what nil becomes, such as 'TERNARY(\(text) != nil, \(whole), …)', or give '\(attribute.name)' a default in the schema")
            }
        }
        switch result {
        case .unknown, .null: return
        case .collection: error("a collection cannot be stored in \(target)", expression.range)
        case .object: error("an object cannot be stored in \(target) (relationships take objects; attributes take values)", expression.range)
        case .manager, .policy, .context, .fetchRequest: error("\(article(result)) result cannot be stored in \(target)", expression.range)
        case .bool, .integer, .double, .decimal, .string, .date, .binary, .uuid, .uri:
            guard let kind = result.valueKind else { return }
            switch ValueRules.assignment(of: kind, to: attribute.type) {
            case .lossless, .checked(warning: nil): return
            case .checked(let warning?) where attribute.type == .bool:
                // Xcode archives a boolean constant as the integer 0 or 1: nothing to warn about.
                guard !Self.isZeroOrOne(expression) else { return }
                self.warning("\(article(result)) result stored in the boolean \(target): \(warning)", expression.range, fix: "say which values are true, such as '… != 0'")
            case .checked(let warning?):
                // Rounded results are whole already: no need to say how to round them.
                if !Self.isWholeNumber(expression) {
                    self.warning("\(article(result)) result stored in the integer \(target): \(warning)", expression.range, fix: "say how to round with floor:(), ceiling:() or trunc:()")
                }
            case .refused:
                error("\(article(result)) result cannot be stored in \(target)", expression.range,
                      fix: CastClass.target(from: kind, to: attribute.type).map { "convert it with CAST(…, \"\($0)\")" + ($0 == "NSDate" ? " (seconds since 2001-01-01)" : "") })
            }
        }
    }

    /// Whether an expression is the integer 0 or 1 (or a choice between such).
    static func isZeroOrOne(_ expression: Expr) -> Bool {
        switch expression.kind {
        case .literal(.integer(let n)): return n == 0 || n == 1
        case .literal(.bool), .literal(.null): return true
        case .ternary(_, let whenTrue, let whenFalse): return isZeroOrOne(whenTrue) && isZeroOrOne(whenFalse)
        default: return false
        }
    }

    /// Whether an expression's numbers are whole whatever the data: a rounding function's result,
    /// an integer, nil, or a choice between such.
    static func isWholeNumber(_ expression: Expr) -> Bool {
        switch expression.kind {
        case .function(let name, let arguments):
            return [NamedFunction.floor, .ceiling, .trunc].contains(NamedFunction.lookup(name, argumentCount: arguments.count))
        case .literal(.integer), .literal(.null), .literal(.bool): return true
        case .ternary(_, let whenTrue, let whenFalse): return isWholeNumber(whenTrue) && isWholeNumber(whenFalse)
        default: return false
        }
    }

    private func article(_ type: ExprType) -> String {
        switch type {
        case .collection, .object, .manager, .policy, .context, .fetchRequest: return "a \(type)"
        default: return English.withArticle("\(type)")
        }
    }

    // MARK: Types

    private mutating func type(of expression: Expr) -> ExprType {
        let range = expression.range
        switch expression.kind {
        case .literal(let value):
            return ExprType(of: value)
        case .aggregate(let items):
            let types = items.map { type(of: $0) }
            return .collection(join(types))
        case .evaluatedObject:
            return scope.evaluatedObject
        case .variable(let name):
            if let bound = scope.variables[name] { return bound }
            error("unknown variable $\(name)", range, fix: Suggestions.closest(to: name, in: scope.variables.keys).map { "did you mean '$\($0)'?" }
                  ?? "variables here: \(scope.variables.keys.sorted().map { "$" + $0 }.joined(separator: ", "))")
            return .unknown
        case .keyPath(let root, let components):
            // Bare: the parser's implicit SELF (an empty range), not a written `SELF.`.
            return keyPath(type(of: root), components[...], bare: root.kind == .evaluatedObject && root.range.start == root.range.end)
        case .index(let base, let index):
            let baseType = type(of: base)
            if case .expression(let position) = index {
                let positionType = type(of: position)
                if positionType != .integer && !positionType.isOpen { error("an index must be a whole number, not \(article(positionType))", position.range) }
            }
            switch baseType {
            case .collection(let element): return index == .size ? .integer : element
            case .unknown, .null: return index == .size ? .integer : .unknown
            default:
                error("cannot index \(article(baseType)); only collections have elements", range)
                return .unknown
            }
        case .negate(let operand):
            let operandType = type(of: operand)
            if !operandType.isNumeric && !operandType.isOpen { error("cannot negate \(article(operandType))", range) }
            return operandType
        case .binary(let op, let left, let right):
            return binary(op, type(of: left), type(of: right), range)
        case .function(let name, let arguments):
            return function(name, arguments, range)
        case .method(let receiver, let selector, let selectorRange, let arguments):
            return method(receiver, selector, selectorRange, arguments, range)
        case .ternary(let condition, let whenTrue, let whenFalse):
            checkPredicate(condition)
            return join([type(of: whenTrue), type(of: whenFalse)])
        case .cast(let operand, let typeName):
            _ = type(of: operand)
            switch typeName {
            case "NSString": return .string
            case "NSNumber": return .unknown
            case "NSDecimalNumber": return .decimal
            case "NSDate": return .date
            default:
                error("CAST to '\(typeName)' is not supported", range,
                      fix: CastClass.fix(forUnknown: typeName))
                return .unknown
            }
        case .fetch(let request, let contextExpression, let pending):
            _ = type(of: contextExpression)
            _ = type(of: pending)
            return fetch(request, range)
        case .subquery(let collection, let variable, let predicate):
            let collectionType = type(of: collection)
            var element: ExprType = .unknown
            switch collectionType {
            case .collection(let inner): element = inner
            case .unknown, .null: break
            default: error("SUBQUERY needs a collection, not \(article(collectionType))", collection.range)
            }
            let saved = scope.variables[variable]
            scope.variables[variable] = element
            checkPredicate(predicate)
            scope.variables[variable] = saved
            return .collection(element)
        case .comparison(let op, let modifier, let options, let left, let right):
            comparison(op, modifier, options, left, right, range)
            return .bool
        case .and(let left, let right):
            checkPredicate(left)
            checkPredicate(right)
            return .bool
        case .or(let left, let right):
            for side in [left, right] {
                if case .and = side.kind, !side.parenthesized {
                    warning("AND binds more tightly than OR here; add parentheses to say which you mean", side.range,
                            fix: "write '(… AND …) OR …' or '… AND (… OR …)'")
                }
            }
            checkPredicate(left)
            checkPredicate(right)
            return .bool
        case .not(let operand):
            checkPredicate(operand)
            return .bool
        case .constantPredicate:
            return .bool
        }
    }

    private func join(_ types: [ExprType]) -> ExprType {
        let known = types.filter { $0 != .null && $0 != .unknown }
        guard let first = known.first else { return types.contains(.unknown) ? .unknown : (types.isEmpty ? .unknown : .null) }
        if known.allSatisfy({ $0 == first }) { return first }
        if known.allSatisfy(\.isNumeric) { return known.contains(.double) ? .double : (known.contains(.decimal) ? .decimal : .integer) }
        return .unknown
    }

    // MARK: Key paths

    /// `bare`: the path starts at the evaluated object, so its first key stands alone in the text,
    /// where a misspelt literal (`nill`) reads as a key.
    private mutating func keyPath(_ start: ExprType, _ components: ArraySlice<PathComponent>, bare: Bool = false) -> ExprType {
        var current = start
        var index = components.startIndex
        while index < components.endIndex {
            switch components[index] {
            case .key(let name, let range):
                current = key(name, of: current, range, bare: bare && index == components.startIndex)
            case .collectionOperator(let op, let range):
                return collectionOperator(op, on: current, rest: components[(index + 1)...], range)
            }
            index += 1
        }
        return current
    }

    /// The literals a word standing alone may have been meant as.
    private static let literalWords = ["nil", "NULL", "TRUE", "FALSE", "YES", "NO", "SELF", "TRUEPREDICATE", "FALSEPREDICATE"]

    private mutating func key(_ name: String, of target: ExprType, _ range: SourceRange, bare: Bool = false) -> ExprType {
        switch target {
        case .unknown, .null: return target
        case .object(let entityName):
            guard let schema = scope.schema, !entityName.isEmpty, let entity = schema.entity(named: entityName) else { return .unknown }
            switch schema.property(named: name, in: entity) {
            case .attribute(let attribute)?: return ExprType(attribute.type)
            case .relationship(let relationship)?:
                return relationship.isToMany ? .collection(.object(relationship.destination)) : .object(relationship.destination)
            case nil:
                if let owner = schema.hierarchy(under: entity).first(where: { sub in sub.attributes.contains { $0.name == name } || sub.relationships.contains { $0.name == name } }) {
                    error("'\(name)' is defined on sub-entity \(owner.name), not on \(entityName)", range,
                          fix: "not every \(entityName) has it; check the entity first or map from \(owner.name)")
                    return .unknown
                }
                let names = schema.allAttributes(of: entity).map(\.name) + schema.allRelationships(of: entity).map(\.name)
                // An escaped key (`#nill`) is meant as a key: its range holds the `#` too.
                let literal = bare && range.end - range.start == name.unicodeScalars.count
                var suggestion = Suggestions.didYouMean(name, in: names) ?? (literal ? Suggestions.didYouMean(name, in: Self.literalWords) : nil)
                // Objects are named by id in every message; where the scope binds it, say how to read it.
                if name == "id", scope.variables["id"] != nil { suggestion = "the object's id is $id (for example $id == \"n1\")" }
                error("unknown key '\(name)' on \(entityName)", range, fix: suggestion ?? "\(entityName) has: \(names.joined(separator: ", "))")
                return .unknown
            }
        case .collection(let element):
            let inner = key(name, of: element, range)
            if case .collection = inner { return inner }
            return .collection(inner)
        case .string where name == "length", .binary where name == "length":
            return .integer
        case .manager where name == "sourceContext" || name == "destinationContext":
            return .context
        default:
            error("cannot read key '\(name)' of \(article(target))", range)
            return .unknown
        }
    }

    private mutating func collectionOperator(_ op: CollectionOperator, on target: ExprType, rest: ArraySlice<PathComponent>, _ range: SourceRange) -> ExprType {
        var element: ExprType = .unknown
        switch target {
        case .collection(let inner): element = inner
        case .unknown, .null: break
        default:
            error("@\(op.rawValue) needs a collection, but this is \(article(target))", range, fix: "apply it to a to-many relationship or an aggregate")
            return .unknown
        }
        if op == .count {
            if let extra = rest.first { error("nothing can follow @count", extra.range) }
            return .integer
        }
        let mapped = rest.isEmpty ? element : keyPath(element, rest)
        switch op {
        case .count: return .integer
        case .sum, .avg:
            let base: ExprType = { if case .collection(let inner) = mapped { return inner } else { return mapped } }()
            if !base.isNumeric && !base.isOpen {
                error("@\(op.rawValue) needs numbers, but the values are \(base)", range)
                return .unknown
            }
            return op == .avg ? (base == .decimal ? .decimal : .double) : (base.isOpen ? .unknown : base)
        case .min, .max:
            if case .collection(let inner) = mapped { return inner }
            return mapped
        case .unionOfObjects, .distinctUnionOfObjects:
            return .collection(mapped)
        default:
            if case .collection(let inner) = mapped { return .collection(inner) }
            return .collection(mapped)
        }
    }

    // MARK: Operators

    private mutating func binary(_ op: BinaryOperator, _ left: ExprType, _ right: ExprType, _ range: SourceRange) -> ExprType {
        switch op {
        case .union, .intersect, .minus:
            for side in [left, right] {
                if case .collection = side { continue }
                if side.isOpen { continue }
                error("\(op.rawValue) needs collections, not \(article(side))", range)
            }
            if case .collection(let element) = left { return .collection(element) }
            return .collection(.unknown)
        default:
            if left.isOpen || right.isOpen {
                return left.isOpen ? (right.isOpen ? .unknown : right) : left
            }
            if left.isNumeric && right.isNumeric {
                if op == .power || op == .divide { return left == .decimal || right == .decimal ? (left == .double || right == .double ? .double : .decimal) : .double }
                if left == .double || right == .double { return .double }
                if left == .decimal || right == .decimal { return .decimal }
                return .integer
            }
            switch (op, left, right) {
            case (.add, .string, .string): return .string
            case (.add, .date, _) where right.isNumeric, (.add, _, .date) where left.isNumeric, (.subtract, .date, _) where right.isNumeric: return .date
            case (.subtract, .date, .date): return .double
            default:
                error("cannot apply '\(op.rawValue)' to \(article(left)) and \(article(right))", range)
                return .unknown
            }
        }
    }

    private mutating func comparison(_ op: ComparisonOperator, _ modifier: QuantifierModifier?, _ options: ComparisonOptions, _ leftExpression: Expr, _ rightExpression: Expr, _ range: SourceRange) {
        var left = type(of: leftExpression)
        let right = type(of: rightExpression)
        if let modifier {
            switch left {
            case .collection(let element): left = element
            case .unknown, .null: left = .unknown
            default:
                warning("\(modifier.rawValue) expects a to-many key path, but this is \(article(left))", leftExpression.range, fix: "remove \(modifier.rawValue)")
            }
        } else if case .collection = left, ![.inCollection, .contains, .equal, .notEqual].contains(op) || !isCollectionOrOpen(right) || right == .null {
            if right == .null && (op == .equal || op == .notEqual) {
                error("a to-many key path compared with nil", leftExpression.range,
                      fix: "test '\(source.text.unicodeScalarsSlice(leftExpression.range)).@count \(op == .equal ? "== 0" : "> 0")', or use ANY/ALL for the elements")
                return
            }
            if op != .contains {
                error("a to-many key path is used where a single value is needed", leftExpression.range,
                      fix: "add ANY, ALL or NONE before it (for example 'ANY \(source.text.unicodeScalarsSlice(leftExpression.range)) \(op.rawValue) …'), or use @count")
                return
            }
        }
        let stringLike: (ExprType) -> Bool = { $0 == .string || $0.isOpen || $0 == .collection(.string) || $0 == .collection(.unknown) }
        if !options.isEmpty && (!stringLike(left) || !stringLike(right)) && !(op == .contains && isCollectionOrOpen(left)) {
            warning("[\(options.letters)] only affects string comparisons", range)
        }
        switch op {
        case .equal, .notEqual:
            if !compatible(left, right) {
                error("comparing \(article(left)) with \(article(right)) is never \(op == .equal ? "true" : "false")", range, fix: "compare values of one kind, or CAST one of them")
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let orderable: (ExprType) -> Bool = { $0.isNumeric || $0 == .string || $0 == .date || $0.isOpen || $0 == .uuid || $0 == .uri }
            if !orderable(left) || !orderable(right) || !compatible(left, right) {
                error("cannot order \(article(left)) and \(article(right))", range)
            }
        case .between:
            if case .collection(let element) = right {
                if !compatible(left, element) { error("BETWEEN bounds are \(element), but the value is \(left)", range) }
            } else if !right.isOpen {
                error("BETWEEN needs two bounds, such as BETWEEN {1, 10}", rightExpression.range)
            }
            if case .aggregate(let bounds) = rightExpression.kind, bounds.count != 2 {
                error("BETWEEN needs exactly two bounds, found \(bounds.count)", rightExpression.range)
            }
        case .inCollection:
            switch right {
            case .collection(let element):
                if !compatible(left, element) { error("\(article(left)) is never IN a collection of \(element)", range) }
            case .string:
                if left != .string && !left.isOpen { error("IN a string tests for a substring; the left side must be a string, not \(article(left))", range) }
            case .unknown, .null: break
            default: error("IN needs a collection or a string on its right, not \(article(right))", rightExpression.range)
            }
        case .contains:
            if case .collection = left { break }
            fallthrough
        case .beginsWith, .endsWith, .like, .matches:
            for (side, expression) in [(left, leftExpression), (right, rightExpression)] where side != .string && !side.isOpen {
                error("\(op.rawValue) compares strings, but this is \(article(side))", expression.range)
            }
            if op == .matches, case .literal(.string(let pattern)) = rightExpression.kind, let problem = RegexGuard.problem(with: pattern) {
                error("MATCHES pattern refused: \(problem)", rightExpression.range)
            }
        }
    }

    private func isCollectionOrOpen(_ type: ExprType) -> Bool {
        if case .collection = type { return true }
        return type.isOpen
    }

    private func compatible(_ a: ExprType, _ b: ExprType) -> Bool {
        if a.isOpen || b.isOpen { return true }
        if a.isNumeric && b.isNumeric { return true }
        switch (a, b) {
        case let (.object(x), .object(y)):
            guard let schema = scope.schema, let left = schema.entity(named: x), let right = schema.entity(named: y) else { return true }
            return schema.root(of: left).name == schema.root(of: right).name
        case let (.collection(x), .collection(y)): return compatible(x, y)
        case (.string, .uri), (.uri, .string), (.string, .uuid), (.uuid, .string): return true
        default: return a == b
        }
    }

    // MARK: Functions

    private mutating func function(_ name: String, _ arguments: [Expr], _ range: SourceRange) -> ExprType {
        let types = arguments.map { type(of: $0) }
        guard let function = NamedFunction.lookup(name, argumentCount: arguments.count) else {
            error("unknown function '\(name)'", range, fix: NamedFunction.fix(forUnknown: name))
            return .unknown
        }
        if function.isAggregate {
            if arguments.isEmpty { error("\(function.rawValue) needs a collection or values", range); return .unknown }
            var elements = types
            if types.count == 1, case .collection(let inner) = types[0] { elements = [inner] }
            if types.count == 1, !isCollectionOrOpen(types[0]) && !types[0].isNumeric {
                error("\(function.rawValue) needs a collection or numbers, not \(article(types[0]))", arguments[0].range)
            }
            switch function {
            case .count: return .integer
            case .min, .max: return join(elements)
            case .mode: return .collection(join(elements))
            case .sum:
                let element = join(elements)
                if !element.isNumeric && !element.isOpen { error("sum: needs numbers, not \(element)", range) }
                return element.isOpen ? .unknown : element
            default:
                let element = join(elements)
                if !element.isNumeric && !element.isOpen { error("\(function.rawValue) needs numbers, not \(element)", range) }
                return .double
            }
        }
        guard arguments.count == function.arity else {
            error("\(function.rawValue) takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), found \(arguments.count)", range)
            return .unknown
        }
        func needNumbers(_ integersOnly: Bool = false) {
            for (argument, argumentType) in zip(arguments, types) where !argumentType.isOpen {
                if integersOnly ? !(argumentType == .integer || argumentType == .bool) : !argumentType.isNumeric {
                    error("\(function.rawValue) needs \(integersOnly ? "whole numbers" : "numbers"), not \(article(argumentType))", argument.range)
                }
            }
        }
        switch function {
        case .add, .subtract, .multiply, .divide, .raise:
            let op: BinaryOperator = [.add: .add, .subtract: .subtract, .multiply: .multiply, .divide: .divide][function] ?? .power
            return binary(op, types[0], types[1], range)
        case .modulus:
            needNumbers()
            return types.allSatisfy { $0 == .integer } ? .integer : .double
        case .sqrt, .log, .ln, .exp:
            needNumbers()
            return .double
        case .floor, .ceiling, .trunc, .abs:
            needNumbers()
            return types[0].isOpen ? .unknown : types[0]
        case .uppercase, .lowercase:
            if types[0] != .string && !types[0].isOpen { error("\(function.rawValue) needs a string, not \(article(types[0]))", arguments[0].range) }
            return .string
        case .length: return .integer
        case .now: return .date
        case .random: return .double
        case .randomUpTo:
            needNumbers(true)
            return .integer
        case .bitwiseAnd, .bitwiseOr, .bitwiseXor, .leftShift, .rightShift, .onesComplement:
            needNumbers(true)
            return .integer
        default: return .unknown
        }
    }

    private mutating func method(_ receiverExpression: Expr, _ selector: String, _ selectorRange: SourceRange, _ arguments: [Expr], _ range: SourceRange) -> ExprType {
        let receiver = type(of: receiverExpression)
        let types = arguments.map { type(of: $0) }
        if receiver == .policy {
            if let known = scope.policyFunctions {
                let trimmed = selector.hasSuffix(":") ? String(selector.dropLast()) : selector
                if !known.contains(selector) && !known.contains(trimmed) && !known.contains(trimmed + ":") {
                    error("the entity policy has no function '\(selector)'", selectorRange,
                          fix: Suggestions.didYouMean(selector, in: known) ?? (known.isEmpty ? "this mapping's policy registers no functions" : "registered: \(known.sorted().joined(separator: ", "))"))
                }
            }
            return .unknown
        }
        guard let known = MethodSelector.named(selector) else {
            error("'\(selector)' is not a selector mapc can call", selectorRange,
                  fix: Suggestions.didYouMean(selector, in: MethodSelector.allCases.map(\.rawValue)) ?? "see the selector table in docs/expressions.md")
            return .unknown
        }
        guard arguments.count == known.arity else {
            error("'\(selector)' takes \(known.arity) argument\(known.arity == 1 ? "" : "s") after the selector, found \(arguments.count)", range)
            return .unknown
        }
        if known.isManagerSelector {
            guard receiver == .manager || receiver == .unknown else {
                error("'\(selector)' is a migration manager selector; call it on $manager", receiverExpression.range)
                return .unknown
            }
            guard case .literal(.string(let name)) = arguments[0].kind else {
                if types[0] != .string && !types[0].isOpen { error("the first argument must be a name string", arguments[0].range) }
                return known == .fetchRequestForSourceEntity ? .fetchRequest : .collection(.unknown)
            }
            switch known {
            case .fetchRequestForSourceEntity:
                if let schema = scope.schema, schema.entity(named: name) == nil {
                    error("unknown source entity '\(name)'", arguments[0].range, fix: Suggestions.didYouMean(name, in: schema.entities.map(\.name)))
                }
                if case .literal(.string(let predicateText)) = arguments[1].kind, case .failure(let problem) = ExpressionParser.parse(predicateText) {
                    error("the fetch request's predicate does not parse: \(problem.description)", arguments[1].range)
                }
                return .fetchRequest
            case .destinationInstancesForSourceRelationship:
                return .collection(.unknown)
            default:
                guard let mappings = scope.entityMappings else { return .collection(.unknown) }
                guard let mapping = mappings[name] else {
                    error("no entity mapping named '\(name)'", arguments[0].range,
                          fix: Suggestions.didYouMean(name, in: mappings.keys) ?? "mappings: \(mappings.keys.sorted().joined(separator: ", "))")
                    return .collection(.unknown)
                }
                let expected = known == .destinationInstancesForEntityMapping ? mapping.source : mapping.destination
                let given: ExprType = { if case .collection(let inner) = types[1] { return inner } else { return types[1] } }()
                if let expected, case .object(let entity) = given, !entity.isEmpty, let schema = scope.schema,
                   let givenEntity = schema.entity(named: entity), !schema.ancestry(of: givenEntity).contains(where: { $0.name == expected }) {
                    error("mapping '\(name)' reads \(expected) objects, but this passes \(entity) objects", arguments[1].range)
                }
                let produced = known == .destinationInstancesForEntityMapping ? mapping.destination : mapping.source
                return .collection(produced.map { .object($0) } ?? .unknown)
            }
        }
        let stringSelectors: Set<MethodSelector> = [.uppercaseString, .lowercaseString, .capitalizedString, .substringToIndex, .substringFromIndex,
                                                    .stringByTrimmingCharactersInSet, .stringByReplacingOccurrences, .stringByAppendingString,
                                                    .hasPrefix, .hasSuffix, .containsString, .componentsSeparatedByString]
        let collectionSelectors: Set<MethodSelector> = [.count, .firstObject, .lastObject, .objectAtIndex, .containsObject, .componentsJoinedByString]
        if stringSelectors.contains(known), receiver != .string, !receiver.isOpen {
            error("'\(selector)' is called on strings, but this is \(article(receiver))", receiverExpression.range)
        }
        if collectionSelectors.contains(known), !isCollectionOrOpen(receiver) {
            error("'\(selector)' is called on collections, but this is \(article(receiver))", receiverExpression.range)
        }
        if [.timeIntervalSince1970, .timeIntervalSinceReferenceDate].contains(known), receiver != .date, !receiver.isOpen {
            error("'\(selector)' is called on dates, but this is \(article(receiver))", receiverExpression.range)
        }
        if known == .length, receiver != .string, receiver != .binary, !receiver.isOpen {
            error("'length' is called on strings and binary data, but this is \(article(receiver))", receiverExpression.range)
        }
        if [.substringToIndex, .substringFromIndex, .objectAtIndex].contains(known), types[0] != .integer, !types[0].isOpen {
            error("'\(selector)' needs a whole number, not \(article(types[0]))", arguments[0].range)
        }
        switch known {
        case .uppercaseString, .lowercaseString, .capitalizedString, .substringToIndex, .substringFromIndex, .stringByTrimmingCharactersInSet,
             .stringByReplacingOccurrences, .stringByAppendingString, .description, .stringValue, .componentsJoinedByString:
            return .string
        case .length, .count, .intValue, .integerValue: return .integer
        case .doubleValue, .timeIntervalSince1970, .timeIntervalSinceReferenceDate: return .double
        case .hasPrefix, .hasSuffix, .containsString, .boolValue, .containsObject: return .bool
        case .componentsSeparatedByString: return .collection(.string)
        case .firstObject, .lastObject, .objectAtIndex:
            if case .collection(let element) = receiver { return element }
            return .unknown
        case .valueForKey, .valueForKeyPath:
            if case .literal(.string(let path)) = arguments[0].kind {
                return keyPath(receiver, PathComponent.components(of: path, at: arguments[0].range)[...])
            }
            return .unknown
        default: return .unknown
        }
    }

    private mutating func fetch(_ request: Expr, _ range: SourceRange) -> ExprType {
        let requestType = type(of: request)
        if requestType != .fetchRequest && !requestType.isOpen {
            error("FETCH needs a fetch request from FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", …), not \(article(requestType))", request.range)
        }
        if case .method(_, let selector, _, let arguments) = request.kind, selector == MethodSelector.fetchRequestForSourceEntity.rawValue,
           let first = arguments.first, case .literal(.string(let entity)) = first.kind {
            if let schema = scope.schema, let predicateArgument = arguments.dropFirst().first, case .literal(.string(let text)) = predicateArgument.kind,
               case .success(let predicate) = ExpressionParser.parse(text), schema.entity(named: entity) != nil {
                var inner = ExpressionChecker(scope: scope, source: ExpressionSource(text: text, origin: source.location(of: predicateArgument.range.start + 1)))
                inner.scope.evaluatedObject = .object(entity)
                inner.checkPredicate(predicate)
                diagnostics += inner.diagnostics
            }
            return .collection(.object(entity))
        }
        return .collection(.unknown)
    }
}

extension String {
    package func unicodeScalarsSlice(_ range: SourceRange) -> String {
        let scalars = Array(unicodeScalars)
        let lower = max(0, min(range.start, scalars.count)), upper = max(lower, min(range.end, scalars.count))
        return String(String.UnicodeScalarView(scalars[lower..<upper]))
    }
}

extension ComparisonOptions {
    var letters: String {
        var text = ""
        if contains(.caseInsensitive) { text += "c" }
        if contains(.diacriticInsensitive) { text += "d" }
        if contains(.normalized) { text += "n" }
        if contains(.localeSensitive) { text += "l" }
        return text
    }
}
