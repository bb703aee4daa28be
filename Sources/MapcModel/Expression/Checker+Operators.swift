import Foundation
import MapcFoundation

/// The types of arithmetic and comparisons, with the operand types each accepts.
extension ExpressionChecker {
    mutating func binary(_ op: BinaryOperator, _ left: ExprType, _ right: ExprType, _ range: SourceRange) -> ExprType {
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
                // A number added to, or taken from, a value of unknown type may make a date (`d + 3600`).
                if op == .add || op == .subtract, (left.isOpen ? right : left).isNumeric { return .unknown }
                return left.isOpen ? (right.isOpen ? .unknown : right) : left
            }
            if left.isNumeric && right.isNumeric {
                if op == .divide && left == .integer && right == .integer { return .integer }
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

    mutating func comparison(_ op: ComparisonOperator, _ modifier: QuantifierModifier?, _ options: ComparisonOptions, _ leftExpression: Expr, _ rightExpression: Expr, _ range: SourceRange) {
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
        if [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .inCollection].contains(op) {
            warnInexactLiterals(comparedWith: left, in: rightExpression)
            warnInexactLiterals(comparedWith: right, in: leftExpression)
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
            // A collection's CONTAINS is membership; a key of no known type may hold one.
            if case .collection = left { break }
            if left.isOpen { break }
            fallthrough
        case .beginsWith, .endsWith, .like, .matches:
            for (side, expression) in [(left, leftExpression), (right, rightExpression)] where side != .string && !side.isOpen {
                error("\(op.rawValue) compares strings, but this is \(article(side))", expression.range)
            }
            // `"\bcat\b"`, `"(a)\1"`: the string's escapes made control characters of a
            // pattern's word boundary or back-reference, which then match nothing said.
            if op == .matches, case .literal(.string(let pattern)) = rightExpression.kind,
               let control = pattern.unicodeScalars.first(where: { (0x01...0x08).contains($0.value) || $0.value == 0x0B || $0.value == 0x0C }) {
                let name = [0x08: "\\b", 0x07: "\\a", 0x0B: "\\v", 0x0C: "\\f"][Int(control.value)] ?? "\\\(control.value) (octal)"
                warning("the MATCHES pattern holds the control character U+\(String(format: "%04X", control.value)), which the string's escape \(name) made",
                        rightExpression.range, fix: "write the pattern's own escape with a doubled backslash (\\\\b for a word boundary, \\\\1 for a group)")
            }
            if op == .matches, case .literal(.string(let pattern)) = rightExpression.kind, let problem = RegexGuard.problem(with: pattern) {
                error("MATCHES pattern refused: \(problem)", rightExpression.range)
            }
        }
    }

    func isCollectionOrOpen(_ type: ExprType) -> Bool {
        if case .collection = type { return true }
        return type.isOpen
    }

    func compatible(_ a: ExprType, _ b: ExprType) -> Bool {
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

    /// Warns where a decimal is compared with a number literal that a double does not hold
    /// exactly (`price >= 0.1`): the literal is a double, compared with the decimal exactly, so
    /// no decimal equals it, and a stored 0.1 is below it. Core Data's SQLite stores compare
    /// both as doubles; mapc's one exact order does not, so it says how to write the decimal.
    private mutating func warnInexactLiterals(comparedWith type: ExprType, in expression: Expr) {
        guard type == .decimal else { return }
        let literals: [Expr]
        switch expression.kind {
        case .literal(.double): literals = [expression]
        case .aggregate(let items): literals = items
        default: return
        }
        for literal in literals {
            guard case .literal(.double(let value)) = literal.kind, value.isFinite else { continue }
            let text = Self.literalText(source.text.unicodeScalarsSlice(literal.range))
            if let exact = ValueOrder.exactDecimal(value), case .success(.decimal(let written)) = ValueParser.parse(text, as: .decimal), exact == written { continue }
            warning("\(text) here is a double, \(String(format: "%.34g", value))…, not the decimal \(text): a decimal compares with it exactly", literal.range,
                    fix: "write CAST(\"\(text)\", \"NSDecimalNumber\") to compare with the decimal \(text)")
        }
    }
}
