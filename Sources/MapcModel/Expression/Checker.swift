import Foundation
import MapcFoundation

/// Type-checks an expression against a schema and the variables in scope, without running it.
///
/// Reports unknown keys (with "did you mean"), type mismatches, unknown functions and selectors,
/// wrong arity, to-many key paths where a single value is needed, unsafe regular expressions,
/// unparenthesised AND/OR mixes (a warning), and results an attribute cannot hold.
package struct ExpressionChecker {
    /// The scope checked against.
    package var scope: CheckScope
    /// Where the expression's text is, for positions.
    package let source: ExpressionSource
    /// Problems found so far.
    package internal(set) var diagnostics: [Diagnostic] = []
    /// Key paths (`$source.image`) known not to be nil for every object evaluated: those the
    /// entity mapping's filter tests against nil.
    package var nonNilKeys: Set<String> = []
    /// Whether the expression is a predicate (`checkPredicate`), where text is not a value.
    var checkingPredicate = false

    /// Creates a checker.
    package init(scope: CheckScope, source: ExpressionSource) {
        self.scope = scope
        self.source = source
    }

    mutating func error(_ message: String, _ range: SourceRange, fix: String? = nil) {
        diagnostics.append(source.diagnostic(.error, message, at: range, fix: fix))
    }

    /// A number literal's text as written, without the parentheses and spaces its range may
    /// take in (`(0.5)`, `- 0.5`).
    static func literalText(_ slice: some StringProtocol) -> String {
        var text = String(slice.filter { !$0.isWhitespace })
        while text.hasPrefix("("), text.hasSuffix(")") { text = String(text.dropFirst().dropLast()) }
        return text
    }

    mutating func warning(_ message: String, _ range: SourceRange, fix: String? = nil) {
        diagnostics.append(source.diagnostic(.warning, message, at: range, fix: fix))
    }

    // MARK: Entry points

    /// Checks a value expression and returns its type.
    @discardableResult
    package mutating func check(_ expression: Expr) -> ExprType {
        type(of: expression)
    }

    /// Checks that an expression is a predicate.
    package mutating func checkPredicate(_ expression: Expr) {
        checkingPredicate = true
        defer { checkingPredicate = false }
        let result = type(of: expression)
        switch result {
        case .bool, .unknown, .null, .integer, .double, .decimal: break
        default: error("expected a predicate (true or false), but this is \(article(result))", expression.range, fix: "compare it, for example 'image != nil'")
        }
    }

    /// `body` run knowing, besides what is known, the key paths `condition` rules nil out of where
    /// it `holds` (`nonNil(where:holds:)`): a TERNARY's branch.
    private mutating func knowing<T>(_ condition: Expr, holds: Bool, _ body: (inout ExpressionChecker) -> T) -> T {
        let known = nonNilKeys
        nonNilKeys = known.union(Self.nonNil(where: condition, holds: holds))
        defer { nonNilKeys = known }
        return body(&self)
    }

    /// Checks an expression whose result is stored in `attribute`.
    package mutating func checkAssignable(_ expression: Expr, to attribute: Attribute, entity: String) {
        checkAssignable(expression, to: attribute, entity: entity, whole: expression)
    }

    /// `checkAssignable` of a part of `whole` stored as it is: each branch of a TERNARY on its own
    /// (the two joined, a string and a number were of no known type, and a branch the attribute
    /// cannot hold passed the check and failed the run); whether nil can come is asked of the
    /// whole, whose condition may rule it out.
    private mutating func checkAssignable(_ expression: Expr, to attribute: Attribute, entity: String, whole: Expr) {
        let target = "attribute '\(entity).\(attribute.name)' (\(attribute.type.rawValue))"
        // A sum of integers divided, anywhere in the value (a condition, `ceiling:`): key-value
        // coding's `@sum` is an `NSDecimalNumber`, which Foundation divides with its fraction,
        // where mapc's is an integer (its type kept: an index, a bool, a policy function take it).
        if expression.range == whole.range, let division = sumDivision(in: expression) {
            warning("a sum of integers divided: Foundation's @sum is a decimal and divides with its fraction (10 / 4 is 2.5, and ceiling:() of it 3), where mapc's is an integer and divides as integers (2)", division.range,
                    fix: "write 1.0 * before the sum to divide as Foundation does, or trunc:() around the division to say the whole number is meant")
        }
        if case .ternary(let condition, let whenTrue, let whenFalse) = expression.kind {
            checkPredicate(condition)
            // Each branch knowing what the condition tested against nil, as `type(of:)` checks a
            // TERNARY (`lastName != nil` guards `firstName + " " + lastName` where it is true).
            knowing(condition, holds: true) { $0.checkAssignable(whenTrue, to: attribute, entity: entity, whole: whole) }
            knowing(condition, holds: false) { $0.checkAssignable(whenFalse, to: attribute, entity: entity, whole: whole) }
            if expression.range == whole.range { warnOfNil(in: expression, stored: attribute, target: target) }
            return
        }
        let result = type(of: expression)
        // After the type's diagnostics: a value that can be nil, going where nil fails validation
        // once the step has done its work (said once, of the whole expression).
        defer {
            if expression.range == whole.range, result != .null { warnOfNil(in: expression, stored: attribute, target: target) }
        }
        // intValue is 32 bits, as Foundation's: a wider destination suggests values beyond it.
        // (Not of a receiver that is an integer already: int16 and int32 values fit.)
        if case .method(let receiver, "intValue", let selectorRange, _) = expression.kind, [.int64, .float, .double, .decimal].contains(attribute.type),
           !isInteger(receiver) {
            warning("intValue gives a 32-bit integer, as Foundation's does, and \(target) holds more: a value outside -2147483648...2147483647 fails the migration", selectorRange,
                    fix: "call integerValue for a 64-bit integer")
        }
        // Two integers divide as integers (NSExpression's rule): into an attribute that holds
        // fractions, the fraction a reader may expect is gone (a sum's division is said above).
        if [.float, .double, .decimal].contains(attribute.type), let division = integerDivision(in: expression), !Self.readsSum(division) {
            warning("an integer divided by an integer is an integer, truncated (7 / 2 is 3, as NSExpression divides), and \(target) would hold no fraction", division.range,
                    fix: "write a double into the division (1.0 * a / b) for the fraction, or trunc:() to say the whole number is meant")
        }
        switch result {
        case .unknown, .null: return
        case .collection: error("a collection cannot be stored in \(target)", expression.range)
        case .object: error("an object cannot be stored in \(target) (relationships take objects; attributes take values)", expression.range)
        case .manager, .policy, .context, .fetchRequest, .entityMapping, .propertyMapping, .userInfo: error("\(article(result)) cannot be stored in \(target)", expression.range)
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
                if !isWholeNumber(expression) {
                    self.warning("\(article(result)) result stored in the integer \(target): \(warning)", expression.range, fix: "say how to round with floor:(), ceiling:() or trunc:()")
                }
            case .refused:
                error("\(article(result)) result cannot be stored in \(target)", expression.range,
                      fix: CastClass.target(from: kind, to: attribute.type).map { "convert it with CAST(…, \"\($0)\")" + Self.castNote(from: kind, to: attribute.type) })
            }
        }
    }

    /// What a CAST between dates and other values counts in, for the fix that names it.
    static func castNote(from kind: ValueKind, to type: AttributeType) -> String {
        switch (kind, type) {
        case (.string, .date): return " (ISO 8601 text, as a data file writes dates)"
        case (_, .date), (.date, _): return " (seconds since 2001-01-01)"
        default: return ""
        }
    }

    /// Warns when an expression stored in a required attribute without a default can give nil.
    private mutating func warnOfNil(in expression: Expr, stored attribute: Attribute, target: String) {
        guard !attribute.isOptional, attribute.defaultValue == nil, let read = firstNilSource(in: expression) else { return }
        let text = source.text.unicodeScalarsSlice(read.range), whole = source.text.unicodeScalarsSlice(expression.range)
        let isConstant = read.kind == .literal(.null)
        warning("\(target) is required, but this can be nil (\(Self.whyNil(read, text: String(text)))): an object that gets nil fails validation when the step runs", read.range,
                fix: isConstant ? "choose a value instead of nil, or give '\(attribute.name)' a default in the schema"
                    : "say what nil becomes, such as 'TERNARY(\(text) != nil, \(whole), …)', or give '\(attribute.name)' a default in the schema")
    }

    /// The first division of two integers in an expression (`a / b`, `divide:by:(a, b)`), anywhere
    /// in it but under `trunc:`, `floor:` or `ceiling:`, which say the whole number is meant.
    private mutating func integerDivision(in expression: Expr) -> Expr? {
        switch expression.kind {
        case .binary(.divide, let left, let right) where isInteger(left) && isInteger(right):
            return expression
        case .function(let name, let arguments):
            let function = NamedFunction.lookup(name, argumentCount: arguments.count)
            if [NamedFunction.trunc, .floor, .ceiling].contains(function) { return nil }
            if function == .divide, arguments.count == 2, isInteger(arguments[0]), isInteger(arguments[1]) { return expression }
        default: break
        }
        for child in expression.children {
            if let found = integerDivision(in: child) { return found }
        }
        return nil
    }

    /// The first division of two integers one of which reads an `@sum`, anywhere in an
    /// expression but under `trunc:` (which gives Foundation's whole number too).
    private mutating func sumDivision(in expression: Expr) -> Expr? {
        switch expression.kind {
        case .binary(.divide, let left, let right) where Self.readsSum(expression) && isInteger(left) && isInteger(right):
            return expression
        case .function(let name, let arguments):
            let function = NamedFunction.lookup(name, argumentCount: arguments.count)
            if function == .trunc { return nil }
            if function == .divide, arguments.count == 2, Self.readsSum(expression), isInteger(arguments[0]), isInteger(arguments[1]) { return expression }
        default: break
        }
        for child in expression.children {
            if let found = sumDivision(in: child) { return found }
        }
        return nil
    }

    /// Whether an expression reads an `@sum` anywhere in it.
    static func readsSum(_ expression: Expr) -> Bool {
        if case .keyPath(_, let components) = expression.kind,
           components.contains(where: { if case .collectionOperator(.sum, _) = $0 { return true } else { return false } }) { return true }
        return expression.children.contains(where: readsSum)
    }

    /// Whether an expression's type is an integer or a boolean; its diagnostics were given already.
    private mutating func isInteger(_ expression: Expr) -> Bool {
        let given = diagnostics.count
        defer { diagnostics.removeSubrange(given...) }
        return [.integer, .bool].contains(type(of: expression))
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

    /// Whether an expression's numbers are whole whatever the data: an integer (a literal, an
    /// integer attribute), a rounding function's result, nil, and whole numbers added, subtracted,
    /// multiplied, summed, negated, made absolute, taken the remainder, the largest or the
    /// smallest of, or chosen between.
    private mutating func isWholeNumber(_ expression: Expr) -> Bool {
        switch expression.kind {
        case .function(let name, let arguments):
            switch NamedFunction.lookup(name, argumentCount: arguments.count) {
            case .floor?, .ceiling?, .trunc?: return true
            case .add?, .subtract?, .multiply?, .modulus?, .abs?, .max?, .min?, .sum?: return arguments.allSatisfy { isWholeNumber($0) }
            default: return isInteger(expression)
            }
        case .binary(.add, let left, let right), .binary(.subtract, let left, let right), .binary(.multiply, let left, let right):
            return isWholeNumber(left) && isWholeNumber(right)
        case .negate(let operand): return isWholeNumber(operand)
        case .literal(.integer), .literal(.null), .literal(.bool): return true
        case .ternary(_, let whenTrue, let whenFalse): return isWholeNumber(whenTrue) && isWholeNumber(whenFalse)
        // `max:({floor:(a), 3})`: a collection written out, each element whole.
        case .aggregate(let elements): return elements.allSatisfy { isWholeNumber($0) }
        default: return isInteger(expression)
        }
    }

    func article(_ type: ExprType) -> String {
        switch type {
        case .object(""): return "an object"
        case .collection, .object, .manager, .policy, .context, .fetchRequest: return "a \(type)"
        default: return English.withArticle("\(type)")
        }
    }

    // MARK: Types

    mutating func type(of expression: Expr) -> ExprType {
        let range = expression.range
        switch expression.kind {
        case .literal(let value):
            if case .double(let number) = value, number.isFinite {
                let text = Self.literalText(source.text.unicodeScalarsSlice(range))
                let underflows = ValueParser.underflowProblem(text, nearest: number) != nil
                let message = underflows ? "\(text) is too small for a double: it is 0.0 here" : "\(text) has more digits than a double keeps: it is \(number) here"
                if !NumberText.isKeptByDouble(text), !diagnostics.contains(where: { $0.message == message }) {
                    // A decimal keeps every digit only of what it can hold (exponents -128 to 127).
                    if case .success(_?) = ValueParser.decimal(text) {
                        warning(message, range, fix: "write CAST(\"\(text)\", \"NSDecimalNumber\") to keep every digit")
                    } else {
                        warning(message, range, fix: underflows ? "write 0 if that is meant (a decimal does not hold \(text) either)"
                                                                : "write the value a double holds (a decimal does not hold \(text) either)")
                    }
                }
            }
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
            let (leftType, rightType) = (type(of: left), type(of: right))
            // Text joined with `+` is nil when a part is: a name joined from a first name and a
            // last name that is not there loses the first name too (mapc's `+` of text; Apple's raises).
            if op == .add, leftType == .string || rightType == .string {
                for operand in [left, right] {
                    guard case .keyPath = operand.kind, firstNilSource(in: operand) != nil else { continue }
                    let text = source.text(of: operand.range)
                    warning("\(text) can be nil, and text + nil is nil: for an object without it, the whole text is nil, its other parts lost", operand.range,
                            fix: "give it a value for nil first: TERNARY(\(text) != nil, \(text), \"\")")
                }
            }
            return binary(op, leftType, rightType, range)
        case .function(let name, let arguments):
            return function(name, arguments, range)
        case .method(let receiver, let selector, let selectorRange, let arguments):
            return method(receiver, selector, selectorRange, arguments, range)
        case .ternary(let condition, let whenTrue, let whenFalse):
            checkPredicate(condition)
            // Each branch is checked knowing what the condition tested against nil.
            let whenTrueType = knowing(condition, holds: true) { $0.type(of: whenTrue) }
            return join([whenTrueType, knowing(condition, holds: false) { $0.type(of: whenFalse) }])
        case .cast(let operand, let typeName):
            // A collection casts to nothing: the run would fail on every object (a collection of
            // text is joined with FUNCTION(x, "componentsJoinedByString:", ", ")).
            let operandType = type(of: operand)
            if case .collection = operandType, CastClass.names.contains(typeName) {
                error("CAST of a collection to \(typeName) fails on every object: a cast takes one value", operand.range,
                      fix: typeName == "NSString" ? "join its elements, FUNCTION(…, \"componentsJoinedByString:\", \", \"), or take one ([FIRST], @max)" : "take one element ([FIRST], @max, @sum) first")
            }
            switch typeName {
            case "NSString": return .string
            // A date's seconds are a double; a number stays what it is; text may be either.
            case "NSNumber":
                switch operandType {
                case .date, .double: return .double
                case .integer: return .integer
                default: return .unknown
                }
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

    func join(_ types: [ExprType]) -> ExprType {
        let known = types.filter { $0 != .null && $0 != .unknown }
        guard let first = known.first else { return types.contains(.unknown) ? .unknown : (types.isEmpty ? .unknown : .null) }
        if known.allSatisfy({ $0 == first }) { return first }
        if known.allSatisfy(\.isNumeric) { return known.contains(.double) ? .double : (known.contains(.decimal) ? .decimal : .integer) }
        return .unknown
    }
}
